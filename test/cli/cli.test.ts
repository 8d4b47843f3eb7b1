import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeTempDir, testEnv } from "../support/server.ts";
import { freePort } from "../../src/lib/free-port.ts";

const MAIN = join(resolve(import.meta.dir, "../.."), "src/main.ts");
const PAYOUT = "0x1111111111111111111111111111111111111111";

let dataDir: string;
beforeAll(() => {
  dataDir = makeTempDir("stablegate-cli-");
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The parent's environment without any STABLEGATE_* of its own, plus `extra`. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("STABLEGATE_") && v !== undefined) env[k] = v;
  return { ...env, ...extra };
}

async function cli(args: string[], extra: Record<string, string> = { STABLEGATE_DATA_DIR: dataDir }) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], { env: childEnv(extra), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const lines = (text: string) => text.trimEnd().split("\n");


describe("stablegate account / key", () => {
  let accountId: string;
  let firstKey: string;
  let secondKey: { id: string; api_key: string };

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
    accountId = out.account.id;
    firstKey = out.api_key;
  });

  test("--name=value flags work too", async () => {
    const { code, stdout } = await cli(["account", "create", "--name=Equals Shop", `--payout-address=${PAYOUT}`]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).account.name).toBe("Equals Shop");
  });

  test("key create prints {id, api_key}", async () => {
    const { code, stdout } = await cli(["key", "create", "--account", accountId]);
    expect(code).toBe(0);
    secondKey = JSON.parse(stdout);
    expect(secondKey.id).toMatch(/^key_[0-9A-Za-z]+$/);
    expect(secondKey.api_key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(secondKey.api_key).not.toBe(firstKey);
  });

  test("key list shows both keys and no secrets", async () => {
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
    expect(all.stdout).not.toContain("sk_live_" + firstKey.slice(8, 20));
  });

  test("key revoke marks the key revoked", async () => {
    const { code, stdout } = await cli(["key", "revoke", secondKey.id]);
    expect(code).toBe(0);
    const revoked = JSON.parse(stdout);
    expect(revoked.id).toBe(secondKey.id);
    expect(revoked.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const list = JSON.parse((await cli(["key", "list", "--account", accountId])).stdout) as Array<{ id: string; revoked_at: string | null }>;
    expect(list.find((k) => k.id === secondKey.id)!.revoked_at).not.toBeNull();
  });

  test("mistakes exit non-zero with one line on stderr and nothing on stdout", async () => {
    const cases: Array<[string, string[]]> = [
      ["account create without --name", ["account", "create", "--payout-address", PAYOUT]],
      ["account create with a bad payout address", ["account", "create", "--name", "X", "--payout-address", "0x123"]],
      ["account create with the zero address", ["account", "create", "--name", "X", "--payout-address", `0x${"0".repeat(40)}`]],
      ["key create for an unknown account", ["key", "create", "--account", "acct_nope"]],
      ["key revoke of an unknown key", ["key", "revoke", "key_nope"]],
      ["key revoke without an id", ["key", "revoke"]],
      ["an unknown key action", ["key", "rotate"]],
    ];
    // In parallel: each run is a fresh bun process.
    const results = await Promise.all(cases.map(async ([name, args]) => ({ name, ...(await cli(args)) })));
    for (const { name, code, stdout, stderr } of results) {
      expect({ name, failed: code !== 0, stdout, stderrLines: lines(stderr).length, prefixed: stderr.startsWith("stablegate: ") }).toEqual({
        name,
        failed: true,
        stdout: "",
        stderrLines: 1,
        prefixed: true,
      });
    }
  });
});

describe("stablegate usage", () => {
  test("--help exits 0 and describes the commands", async () => {
    const { code, stdout } = await cli(["--help"]);
    expect(code).toBe(0);
    for (const word of ["serve", "account create", "key create", "key list", "key revoke"]) expect(stdout).toContain(word);
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

  test("serves /healthz, works with CLI changes made while it runs, and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const serveDir = makeTempDir("stablegate-serve-");
    const env = { ...testEnv(serveDir), STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: String(port) };
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], { env: childEnv(env), stdout: "pipe", stderr: "pipe" });
    try {
      let healthy = false;
      for (let i = 0; i < 200 && !healthy && proc.exitCode === null; i++) {
        try {
          healthy = (await fetch(`${url}/healthz`)).status === 200;
        } catch {
          await Bun.sleep(50);
        }
      }
      expect(healthy).toBe(true);

      // Account and key commands share the data dir with the running server.
      const created = await cli(["account", "create", "--name", "Live", "--payout-address", PAYOUT], env);
      expect(created.code).toBe(0);
      const { account, api_key } = JSON.parse(created.stdout);
      const auth = { authorization: `Bearer ${api_key}` };
      expect((await fetch(`${url}/api/v1/payments`, { headers: auth })).status).toBe(200);
      const keyId = (JSON.parse((await cli(["key", "list", "--account", account.id], env)).stdout) as Array<{ id: string }>)[0]!.id;
      expect((await cli(["key", "revoke", keyId], env)).code).toBe(0);
      expect((await fetch(`${url}/api/v1/payments`, { headers: auth })).status).toBe(401);

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
