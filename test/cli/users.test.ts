/**
 * `stablegate user ...` as an operator runs it: a real process on a real data dir, JSON on
 * stdout, one line and exit 2 for a usage mistake.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { usersService } from "../../src/cli/users.ts";
import { openDb } from "../../src/db/index.ts";
import { runCli } from "../support/cli.ts";
import { makeTempDir, TEST_PAYOUT } from "../support/server.ts";

let dataDir: string;
beforeAll(() => {
  dataDir = makeTempDir("stablegate-cli-users-");
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cli = (args: string[], stdin?: string) => runCli(args, { STABLEGATE_DATA_DIR: dataDir }, stdin);

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

/** A user made through the CLI with a known password. */
async function newUser(accountId: string) {
  const password = "a password long enough";
  const { code, stdout, stderr } = await cli(
    ["user", "create", "--account", accountId, "--email", email(), "--password-stdin"],
    password,
  );
  if (code !== 0) throw new Error(`user create: ${stderr}`);
  return { ...(JSON.parse(stdout).user as { id: string; email: string }), password };
}

/** Signs `user` in through the service on the same data dir, as the server would; returns the token. */
async function sessionOf(user: { email: string; password: string }): Promise<string> {
  const db = openDb(dataDir);
  try {
    return (await usersService(db).signIn({ ...user, client: "203.0.113.1" })).token;
  } finally {
    await db.close();
  }
}

async function isLive(token: string): Promise<boolean> {
  const db = openDb(dataDir);
  try {
    return (await usersService(db).resolveSession(token)) !== null;
  } finally {
    await db.close();
  }
}

describe("stablegate user list / reset-password / delete", () => {
  test("list shows every user, or one account's with --account, and never a password or its hash", async () => {
    const [a, b] = [await newAccount(), await newAccount()];
    const [a1, a2, b1] = [await newUser(a), await newUser(a), await newUser(b)];
    const one = await cli(["user", "list", "--account", a]);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout).map((u: { id: string }) => u.id)).toEqual([a1.id, a2.id]);
    const all = await cli(["user", "list"]);
    const ids = JSON.parse(all.stdout).map((u: { id: string }) => u.id);
    expect(ids).toEqual(expect.arrayContaining([a1.id, a2.id, b1.id]));
    expect(all.stdout).not.toContain(a1.password);
    expect(all.stdout).not.toContain("argon2");
  });

  test("reset-password prints a new password once and ends every session of the user", async () => {
    const user = await newUser(await newAccount());
    const token = await sessionOf(user);
    const { code, stdout } = await cli(["user", "reset-password", user.id]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.user.id).toBe(user.id);
    expect(out.password).toMatch(/^[0-9A-Za-z]{24}$/);
    expect(await isLive(token)).toBe(false);
    expect(await isLive(await sessionOf({ email: user.email, password: out.password }))).toBe(true);
  });

  test("reset-password --password-stdin sets the given one; a short one changes nothing", async () => {
    const user = await newUser(await newAccount());
    const token = await sessionOf(user);
    const short = await cli(["user", "reset-password", user.id, "--password-stdin"], "too short\n");
    expect(short.code).toBe(2);
    expect(await isLive(token)).toBe(true);
    const given = await cli(["user", "reset-password", user.id, "--password-stdin"], "another long password\n");
    expect(given.code).toBe(0);
    expect(JSON.parse(given.stdout).password).toBe("another long password");
    expect(await isLive(token)).toBe(false);
  });

  test("delete removes the user and ends their sessions; an unknown id is exit 1", async () => {
    const accountId = await newAccount();
    const user = await newUser(accountId);
    const token = await sessionOf(user);
    const { code, stdout } = await cli(["user", "delete", user.id]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ id: user.id, deleted: true });
    expect(await isLive(token)).toBe(false);
    expect(JSON.parse((await cli(["user", "list", "--account", accountId])).stdout)).toEqual([]);
    const again = await cli(["user", "delete", user.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`stablegate: no user ${user.id}\n`);
  });

  test("reset-password and delete without a USER_ID are usage mistakes", async () => {
    for (const action of ["reset-password", "delete"]) {
      const { code, stderr } = await cli(["user", action]);
      expect(code).toBe(2);
      expect(stderr).toContain(`usage: stablegate user ${action} USER_ID`);
    }
  });
});
