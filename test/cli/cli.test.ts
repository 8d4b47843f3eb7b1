import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { UsageError } from "../../src/cli/args.ts";
import { NotFoundError } from "../../src/lib/errors.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { runCli } from "../support/cli.ts";
import { spawnServe, startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir, testEnv } from "../support/server.ts";

const PAYOUT = "0x1111111111111111111111111111111111111111";

let dataDir: string;
beforeAll(() => {
  dataDir = makeTempDir("stablegate-cli-");
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cli = (args: string[], extra: Record<string, string> = { STABLEGATE_DATA_DIR: dataDir }) => runCli(args, extra);

const lines = (text: string) => text.trimEnd().split("\n");

/** A fresh account through the CLI: each test makes its own, so any one runs alone or in any order. */
async function newAccount(name = "CLI Shop"): Promise<{ accountId: string; apiKey: string }> {
  const { code, stdout, stderr } = await cli(["account", "create", "--name", name, "--payout-address", PAYOUT]);
  if (code !== 0) throw new Error(`account create: ${stderr}`);
  const out = JSON.parse(stdout);
  return { accountId: out.account.id, apiKey: out.api_key };
}

async function newKey(accountId: string): Promise<{ id: string; api_key: string }> {
  const { code, stdout, stderr } = await cli(["key", "create", "--account", accountId]);
  if (code !== 0) throw new Error(`key create: ${stderr}`);
  return JSON.parse(stdout);
}

describe("stablegate account / key", () => {
  test("account create prints {account, api_key}", async () => {
    const { code, stdout, stderr } = await cli(["account", "create", "--name", "CLI Shop", "--payout-address", PAYOUT]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(Object.keys(out).sort()).toEqual(["account", "api_key"]);
    expect(out.api_key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(out.account.id).toMatch(/^acct_[0-9A-Za-z]+$/);
    expect(out.account.name).toBe("CLI Shop");
    expect(out.account.payout_address).toBe(PAYOUT);
    expect(JSON.stringify(out.account)).not.toContain(out.api_key);
  });

  test("--name=value flags work too", async () => {
    const { code, stdout } = await cli(["account", "create", "--name=Equals Shop", `--payout-address=${PAYOUT}`]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).account.name).toBe("Equals Shop");
  });

  test("key create prints {id, api_key}", async () => {
    const { accountId, apiKey } = await newAccount();
    const { code, stdout } = await cli(["key", "create", "--account", accountId]);
    expect(code).toBe(0);
    const key = JSON.parse(stdout);
    expect(Object.keys(key).sort()).toEqual(["api_key", "id"]);
    expect(key.id).toMatch(/^key_[0-9A-Za-z]+$/);
    expect(key.api_key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(key.api_key).not.toBe(apiKey);
  });

  test("key list shows both keys and no secrets", async () => {
    const { accountId, apiKey: firstKey } = await newAccount();
    const secondKey = await newKey(accountId);
    await newAccount("Another Shop");
    const { code, stdout } = await cli(["key", "list", "--account", accountId]);
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as Array<{ id: string; account_id: string; revoked_at: string | null }>;
    expect(list).toHaveLength(2);
    expect(list.map((k) => k.id)).toContain(secondKey.id);
    for (const k of list) {
      expect(k.account_id).toBe(accountId);
      expect(k.revoked_at).toBeNull();
    }
    expect(stdout).not.toContain(firstKey);
    expect(stdout).not.toContain(secondKey.api_key);
    // Without --account: every key of every account, still without secrets.
    const all = await cli(["key", "list"]);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout).length).toBeGreaterThanOrEqual(3);
    expect(all.stdout).not.toContain(`sk_live_${firstKey.slice(8, 20)}`);
  });

  test("key revoke marks the key revoked", async () => {
    const { accountId } = await newAccount();
    const secondKey = await newKey(accountId);
    const { code, stdout } = await cli(["key", "revoke", secondKey.id]);
    expect(code).toBe(0);
    const revoked = JSON.parse(stdout);
    expect(revoked.id).toBe(secondKey.id);
    expect(revoked.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const list = JSON.parse((await cli(["key", "list", "--account", accountId])).stdout) as Array<{
      id: string;
      revoked_at: string | null;
    }>;
    expect(list.find((k) => k.id === secondKey.id)!.revoked_at).not.toBeNull();
    expect(list.filter((k) => k.revoked_at === null)).toHaveLength(1); // the account's first key is untouched
  });

  test("mistakes exit non-zero with one line on stderr and nothing on stdout", async () => {
    const cases: Array<[string, string[]]> = [
      ["account create without --name", ["account", "create", "--payout-address", PAYOUT]],
      ["account create with a bad payout address", ["account", "create", "--name", "X", "--payout-address", "0x123"]],
      [
        "account create with the zero address",
        ["account", "create", "--name", "X", "--payout-address", `0x${"0".repeat(40)}`],
      ],
      ["key create for an unknown account", ["key", "create", "--account", "acct_nope"]],
      ["key revoke of an unknown key", ["key", "revoke", "key_nope"]],
      ["key revoke without an id", ["key", "revoke"]],
      ["an unknown key action", ["key", "rotate"]],
    ];
    // In parallel: each run is a fresh bun process.
    const results = await Promise.all(cases.map(async ([name, args]) => ({ name, ...(await cli(args)) })));
    for (const { name, code, stdout, stderr } of results) {
      expect({
        name,
        failed: code !== 0,
        stdout,
        stderrLines: lines(stderr).length,
        prefixed: stderr.startsWith("stablegate: "),
      }).toEqual({
        name,
        failed: true,
        stdout: "",
        stderrLines: 1,
        prefixed: true,
      });
    }
  });
});

describe("stablegate account list / show", () => {
  test("list and show print each account with its payout address and fee", async () => {
    const created = JSON.parse(
      (await cli(["account", "create", "--name", "Listed Shop", "--payout-address", PAYOUT])).stdout,
    ).account;
    const list = await cli(["account", "list"]);
    expect(list.code).toBe(0);
    const accounts = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    expect(accounts).toContainEqual(created);
    expect(created).toMatchObject({ payout_address: PAYOUT, fee_bps: null });
    const show = await cli(["account", "show", created.id]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toEqual(created);
    expect(show.stdout).not.toContain("sk_live_");
  });

  test("an all-lower-case payout address is accepted and stored checksummed", async () => {
    const lower = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
    const { code, stdout } = await cli(["account", "create", "--name", "Lower Shop", "--payout-address", lower]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).account.payout_address).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  });
});

describe("stablegate account set-payout", () => {
  const NEW_PAYOUT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

  test("an all-lower-case address is accepted and printed checksummed; the account shows it", async () => {
    const { accountId } = await newAccount("Payout Shop");
    const { code, stdout, stderr } = await cli(["account", "set-payout", accountId, NEW_PAYOUT.toLowerCase()]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(stdout)).toMatchObject({ id: accountId, payout_address: NEW_PAYOUT });
    expect(JSON.parse((await cli(["account", "show", accountId])).stdout).payout_address).toBe(NEW_PAYOUT);
  });

  test("a bad checksum or a missing argument exits 2, an unknown account 1; nothing changes", async () => {
    const { accountId } = await newAccount("Typo Shop");
    const badChecksum = NEW_PAYOUT.replace("C51812dc", "c51812dC");
    const runs: Array<[string[], number, string]> = [
      [["account", "set-payout", accountId, badChecksum], 2, "EIP-55 checksum"],
      [["account", "set-payout", accountId], 2, "usage: stablegate account set-payout ACCOUNT_ID ADDRESS"],
      [["account", "set-payout", "acct_nope", NEW_PAYOUT], 1, "no account acct_nope"],
    ];
    for (const [args, expected, says] of runs) {
      const { code, stdout, stderr } = await cli(args);
      expect({ args, code, stdout, lines: lines(stderr).length, says: stderr.includes(says) }).toEqual({
        args,
        code: expected,
        stdout: "",
        lines: 1,
        says: true,
      });
    }
    expect(JSON.parse((await cli(["account", "show", accountId])).stdout).payout_address).toBe(PAYOUT);
  });
});

describe("stablegate exit codes", () => {
  // One letter's case flipped from the checksummed 0x70997970C51812dc3A010C7d01b50e0d17dc79C8.
  const BAD_CHECKSUM = "0x70997970c51812dc3A010C7d01b50e0d17dc79C8";
  const usage: Array<[string, string[], string]> = [
    ["a misspelt --account on key list", ["key", "list", "--acount", "acct_x"], "--acount"],
    [
      "a misspelt --fee-bps on account create",
      ["account", "create", "--name", "Typo Shop", "--payout-address", PAYOUT, "--fee-bsp", "500"],
      "--fee-bsp",
    ],
    ["a flag without its value", ["key", "create", "--account"], "--account"],
    ["a flag the command does not take", ["key", "revoke", "key_x", "--account", "acct_x"], "--account"],
    ["an extra argument", ["key", "revoke", "key_a", "key_b"], "key_b"],
    ["account show without an id", ["account", "show"], "ACCOUNT_ID"],
    [
      "a bad payout address",
      ["account", "create", "--name", "X", "--payout-address", "0x123"],
      "payout address must be a 0x-prefixed 20-byte address",
    ],
    [
      "the zero address",
      ["account", "create", "--name", "X", "--payout-address", `0x${"0".repeat(40)}`],
      "zero address",
    ],
    [
      "a payout address with a wrong EIP-55 checksum",
      ["account", "create", "--name", "X", "--payout-address", BAD_CHECKSUM],
      "checksum",
    ],
    ["a blank name", ["account", "create", "--name", " ", "--payout-address", PAYOUT], "name"],
    [
      "a fee that is not a number",
      ["account", "create", "--name", "X", "--payout-address", PAYOUT, "--fee-bps", "5%"],
      "--fee-bps",
    ],
    ["a misspelt flag on dev pay", ["dev", "pay", "0xabc", "--cros-chain"], "--cros-chain"],
  ];
  const notFound: Array<[string, string[], string]> = [
    ["key create for an unknown account", ["key", "create", "--account", "acct_nope"], "acct_nope"],
    ["account show of an unknown account", ["account", "show", "acct_nope"], "acct_nope"],
    ["key revoke of an unknown key", ["key", "revoke", "key_nope"], "key_nope"],
  ];

  const env = () => ({ STABLEGATE_DATA_DIR: dataDir });

  test("usage mistakes and bad values are UsageErrors naming the problem, and change nothing", async () => {
    const before = await runAccountCommand("account", ["list"], env());
    for (const [name, args, word] of usage.filter(([, args]) => args[0] !== "dev")) {
      let thrown: unknown;
      try {
        await runAccountCommand(args[0] as "account" | "key", args.slice(1), env());
      } catch (error) {
        thrown = error;
      }
      expect({
        name,
        usage: thrown instanceof UsageError,
        names: String((thrown as Error)?.message).includes(word),
      }).toEqual({ name, usage: true, names: true });
    }
    expect(await runAccountCommand("account", ["list"], env())).toEqual(before);
  });

  test("the limits themselves are accepted: a 200-character name, a fee of 0 and of 10000 bps; one past them is refused", async () => {
    // A data dir of its own: a fee account would stop the shared one's server without a fee recipient.
    const feeEnv = { STABLEGATE_DATA_DIR: makeTempDir("stablegate-cli-limits-"), STABLEGATE_FEE_RECIPIENT: PAYOUT };
    try {
      const create = async (name: string, fee: string) =>
        (await runAccountCommand(
          "account",
          ["create", "--name", name, "--payout-address", PAYOUT, "--fee-bps", fee],
          feeEnv,
        )) as {
          account: { name: string; fee_bps: number | null };
        };
      expect((await create("n".repeat(200), "0")).account).toMatchObject({ name: "n".repeat(200), fee_bps: 0 });
      expect((await create("Whole Fee Shop", "10000")).account.fee_bps).toBe(10_000);
      const before = await runAccountCommand("account", ["list"], feeEnv);
      await expect(create("n".repeat(201), "0")).rejects.toThrow("name must be 1 to 200 characters");
      await expect(create("Too Much Shop", "10001")).rejects.toThrow("fee bps must be a whole number from 0 to 10000");
      expect(await runAccountCommand("account", ["list"], feeEnv)).toEqual(before);
    } finally {
      rmSync(feeEnv.STABLEGATE_DATA_DIR, { recursive: true, force: true });
    }
  });

  test("unknown accounts and keys are not usage mistakes", async () => {
    for (const [name, args, word] of notFound) {
      await expect(runAccountCommand(args[0] as "account" | "key", args.slice(1), env()), name).rejects.toThrow(
        NotFoundError,
      );
      await expect(runAccountCommand(args[0] as "account" | "key", args.slice(1), env()), name).rejects.toThrow(word);
    }
  });

  test("from the command line: usage mistakes and bad values exit 2, unknown ids 1, each with one line", async () => {
    const runs: Array<[string[], number]> = [
      [["key", "list", "--acount", "acct_x"], 2],
      [["account", "create", "--name", "X", "--payout-address", BAD_CHECKSUM], 2],
      [["dev", "pay", "0xabc", "--cros-chain"], 2],
      [["dev", "pay", "0xabc", "--chain"], 2],
      [["dev", "pay", "0xabc", "--chain", "local-source", "--cross-chain"], 2],
      [["account", "show", "acct_nope"], 1],
    ];
    const results = await Promise.all(
      runs.map(async ([args, expected]) => ({ args: args.join(" "), expected, ...(await cli(args)) })),
    );
    for (const { args, expected, code, stdout, stderr } of results) {
      expect({ args, code, stdout, lines: lines(stderr).length }).toEqual({
        args,
        code: expected,
        stdout: "",
        lines: 1,
      });
    }
  });
});

describe("stablegate usage", () => {
  test("--help exits 0 and describes the commands", async () => {
    const { code, stdout } = await cli(["--help"]);
    expect(code).toBe(0);
    for (const word of [
      "serve",
      "account create",
      "account list",
      "account show",
      "key create",
      "key list",
      "key revoke",
      "dev pay <payment_id> --cross-chain",
      "dev pay <payment_id> [amount] --chain NAME",
    ]) {
      expect(stdout).toContain(word);
    }
  });

  test("version prints the package version", async () => {
    const { code, stdout } = await cli(["version"]);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("an unknown command exits 2 with one line on stderr", async () => {
    const { code, stdout, stderr } = await cli(["frobnicate"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(lines(stderr)).toHaveLength(1);
    expect(stderr).toContain("frobnicate");
  });
});

describe("stablegate serve", () => {
  test("a bad STABLEGATE_PORT stops start-up with one line naming it", async () => {
    const { code, stderr } = await cli(["serve"], { ...testEnv(dataDir), STABLEGATE_PORT: "abc" });
    expect(code).not.toBe(0);
    expect(lines(stderr)).toHaveLength(1);
    expect(stderr).toContain("STABLEGATE_PORT");
  });

  test("bad values that only show at start-up exit 78 with one line naming the variable", async () => {
    const cases: Array<[string, string]> = [
      ["STABLEGATE_HOST", "not_a_host"],
      ["STABLEGATE_HOST", "999.1.1.1"],
      ["STABLEGATE_HOST", "192.0.2.1"], // a valid address, but not this machine's
      ["STABLEGATE_DATA_DIR", "/proc/nope"],
      ["STABLEGATE_BASE_URL", "ws://pay.example.com"],
      ["STABLEGATE_CCTP_SOURCES", "sepolia=ftp://rpc.example.com"],
      ["STABLEGATE_CCTP_API_URL", "gopher://iris.example.com"],
    ];
    const port = String(await freePort());
    const results = await Promise.all(
      cases.map(async ([variable, value]) => ({
        variable,
        ...(await cli(["serve"], {
          ...testEnv(dataDir),
          STABLEGATE_PORT: port,
          STABLEGATE_CCTP_DOMAIN: "6",
          [variable]: value,
        })),
      })),
    );
    for (const { variable, code, stderr } of results) {
      expect({
        variable,
        code,
        lines: lines(stderr).length,
        named: stderr.startsWith(`stablegate: ${variable}: `),
      }).toEqual({ variable, code: 78, lines: 1, named: true });
    }
  });

  test("the start-up log names the bound address, the base URL and the cross-chain sources", async () => {
    const port = await freePort();
    const serveDir = makeTempDir("stablegate-serve-");
    const server = spawnServe({
      ...testEnv(serveDir),
      STABLEGATE_HOST: "0.0.0.0",
      STABLEGATE_PORT: String(port),
      STABLEGATE_BASE_URL: "https://pay.example.test",
      STABLEGATE_LOG_LEVEL: "info",
      STABLEGATE_CCTP_SOURCES: "sepolia=http://127.0.0.1:9",
      STABLEGATE_CCTP_DOMAIN: "6",
    });
    try {
      await server.listening();
      server.proc.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      const logged = lines(await server.stdout()).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged.find((l) => l.msg === "listening")).toMatchObject({
        address: `0.0.0.0:${port}`,
        base_url: "https://pay.example.test",
      });
      expect(logged.find((l) => l.msg === "cross-chain funding on")).toMatchObject({ source_chains: ["sepolia"] });
    } finally {
      await server.stop();
      rmSync(serveDir, { recursive: true, force: true });
    }
  });

  test("serves /healthz, works with CLI changes made while it runs, and exits 0 on SIGTERM", async () => {
    const serveDir = makeTempDir("stablegate-serve-");
    const env = testEnv(serveDir);
    // Starting waits until /healthz answers 200.
    const { proc, url } = await startServeProcess(env).catch((error) => {
      rmSync(serveDir, { recursive: true, force: true });
      throw error;
    });
    try {
      // Account and key commands share the data dir with the running server.
      const created = await cli(["account", "create", "--name", "Live", "--payout-address", PAYOUT], env);
      expect(created.code).toBe(0);
      const { account, api_key } = JSON.parse(created.stdout);
      const merchant = api(url, api_key);
      expect((await merchant("/api/v1/payments")).status).toBe(200);
      const keyId = (
        JSON.parse((await cli(["key", "list", "--account", account.id], env)).stdout) as Array<{ id: string }>
      )[0]!.id;
      expect((await cli(["key", "revoke", keyId], env)).code).toBe(0);
      expect((await merchant("/api/v1/payments")).status).toBe(401);

      // A second server on the same data directory would double-send settlements and webhooks.
      const second = await cli(["serve"], { ...env, STABLEGATE_PORT: String(await freePort()) });
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain(`in use by another stablegate serve (pid ${proc.pid})`);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);

      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      expect(existsSync(join(serveDir, "serve.pid"))).toBe(false);
    } finally {
      if (proc.exitCode === null) proc.kill("SIGKILL");
      await proc.exited;
      rmSync(serveDir, { recursive: true, force: true });
    }
  });
});
