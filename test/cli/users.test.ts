/**
 * `stablegate user ...` as an operator runs it: a real process on a real data dir, JSON on
 * stdout, one line and exit 2 for a usage mistake.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { childEnv, MAIN } from "../support/serve-process.ts";
import { makeTempDir, TEST_PAYOUT } from "../support/server.ts";

let dataDir: string;
beforeAll(() => {
  dataDir = makeTempDir("stablegate-cli-users-");
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function cli(args: string[], stdin?: string) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: childEnv({ STABLEGATE_DATA_DIR: dataDir }),
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

async function newAccount(): Promise<string> {
  const { code, stdout, stderr } = await cli([
    "account",
    "create",
    "--name",
    "Users CLI",
    "--payout-address",
    TEST_PAYOUT,
  ]);
  if (code !== 0) throw new Error(`account create: ${stderr}`);
  return JSON.parse(stdout).account.id;
}

const email = () => `cli-${crypto.randomUUID().slice(0, 8)}@shop.example`;

describe("stablegate user create", () => {
  test("prints {user, password} with a generated password shown only here", async () => {
    const accountId = await newAccount();
    const address = email();
    const { code, stdout, stderr } = await cli(["user", "create", "--account", accountId, "--email", address]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(Object.keys(out).sort()).toEqual(["password", "user"]);
    expect(out.user).toEqual({
      id: expect.stringMatching(/^usr_/),
      account_id: accountId,
      email: address,
      created_at: expect.any(String),
    });
    expect(out.password).toMatch(/^[0-9A-Za-z]{24}$/);
  });

  test("--password-stdin takes the first line of standard input", async () => {
    const accountId = await newAccount();
    const { code, stdout } = await cli(
      ["user", "create", "--account", accountId, "--email", email(), "--password-stdin"],
      "correct horse battery staple\n",
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout).password).toBe("correct horse battery staple");
  });

  test("usage mistakes are one line and exit 2, and create nobody", async () => {
    const accountId = await newAccount();
    const address = email();
    const cases: Array<[string[], string | undefined, RegExp]> = [
      [["user", "create", "--email", address], undefined, /--account is required/],
      [["user", "create", "--account", accountId], undefined, /--email is required/],
      [["user", "create", "--account", "acct_nope", "--email", address], undefined, /--account: no account acct_nope/],
      [["user", "create", "--account", accountId, "--email", "nope"], undefined, /email must be an address/],
      [["user", "create", "--account", accountId, "--email", address, "--password-stdin"], "short\n", /at least 12/],
      [
        ["user", "create", "--account", accountId, "--email", address, "--password-stdin"],
        "",
        /no password on standard input/,
      ],
      [["user", "create", "--account", accountId, "--email", address, "--acount", "x"], undefined, /unknown option/i],
      [["user", "frobnicate"], undefined, /unknown command: user frobnicate/],
    ];
    for (const [args, stdin, message] of cases) {
      const { code, stdout, stderr } = await cli(args, stdin);
      expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(stderr).toMatch(message);
      expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    }
    const list = await cli(["user", "list", "--account", accountId]);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });
});
