/**
 * `serve` and the CLI on a real PostgreSQL database, as processes: the compiled binary runs on
 * it; a second `serve` on the same database is refused while the first runs and starts once it
 * is gone, even after kill -9; processes starting at the same moment migrate it once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { freePort } from "../../src/lib/free-port.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { childEnv, spawnServe, startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir, testEnv } from "../support/server.ts";
import { builtBinary } from "../support/stack.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function postgresEnv(): Promise<Record<string, string>> {
  const dir = makeTempDir();
  dirs.push(dir);
  return testEnv(dir, await createTestDatabase());
}

describe("on PostgreSQL", () => {
  test("the compiled binary serves from it: an account from the CLI, a payment over HTTP", async () => {
    const env = await postgresEnv();
    const binary = await builtBinary();
    const run = async (args: string[]) => {
      const proc = Bun.spawn([binary, ...args], { env: childEnv(env), stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      if (code !== 0) throw new Error(`stablegate ${args.join(" ")}: ${code} ${err}`);
      return JSON.parse(out);
    };
    const { api_key } = await run([
      "account",
      "create",
      "--name",
      "Binary Shop",
      "--payout-address",
      `0x${"22".repeat(20)}`,
    ]);
    const serve = await startServeProcess(env, { command: [binary, "serve"] });
    try {
      const call = api(serve.url, api_key);
      const created = await call("/api/v1/payments", { body: { amount: "7.25" } });
      expect(created.status).toBe(201);
      expect((await call(`/api/v1/payments/${created.json.id}`)).json).toEqual(created.json);
      expect((await run(["account", "list"])).map((a: { name: string }) => a.name)).toEqual(["Binary Shop"]);
    } finally {
      await serve.stop();
    }
  }, 120_000); // the first build of the binary takes a while

  test("one serve per database: a second is refused while the first runs, and starts after its kill -9", async () => {
    const env = await postgresEnv();
    const first = await startServeProcess(env);
    try {
      const second = spawnServe({ ...env, STABLEGATE_PORT: String(await freePort()) });
      try {
        expect(await second.exited).toBe(1);
        expect(await second.stderr()).toContain("in use by another stablegate serve");
      } finally {
        await second.stop();
      }
      expect((await fetch(`${first.url}/healthz`)).ok).toBe(true);
    } finally {
      await first.stop(); // SIGKILL: PostgreSQL ends its session, and the lock with it
    }
    const third = await startServeProcess(env);
    await third.stop();
  });

  test("processes starting at the same moment migrate the database once", async () => {
    const env = await postgresEnv();
    const results = await Promise.all(Array.from({ length: 4 }, () => runCli(["account", "list"], env)));
    for (const result of results) expect([result.code, result.stderr]).toEqual([0, ""]);
    const admin = new SQL(env.STABLEGATE_DATABASE_URL!, { max: 1 });
    try {
      const rows = await admin`SELECT version FROM schema_migrations`;
      expect([...rows].map((row) => Number(row.version))).toEqual([14]);
    } finally {
      await admin.close();
    }
  });
});
