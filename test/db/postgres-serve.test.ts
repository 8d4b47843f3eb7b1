/**
 * `serve` and the CLI on a real PostgreSQL database, as processes: the compiled binary runs on
 * it; two `serve` processes share it, one holding the chain lease and handing it over as it
 * stops; processes starting at the same moment migrate it once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { POSTGRES_MIGRATIONS } from "../../src/db/migrations.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { runCli, runToExit } from "../support/cli.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { childEnv, spawnServe, startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir, testEnv } from "../support/server.ts";
import { builtBinary, TEST_METRICS_TOKEN } from "../support/stack.ts";
import { waitFor } from "../support/wait.ts";

const PAYOUT = `0x${"22".repeat(20)}`;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function postgresEnv(opts: { unixSocket?: boolean } = {}): Promise<Record<string, string>> {
  const dir = makeTempDir();
  dirs.push(dir);
  // The token shows /readyz's details (the leases), read below.
  return {
    ...testEnv(dir, await createTestDatabase("throwaway", opts)),
    STABLEGATE_METRICS_TOKEN: TEST_METRICS_TOKEN,
  };
}

describe("on PostgreSQL", () => {
  test("the compiled binary serves from it: an account from the CLI, a payment over HTTP", async () => {
    const env = await postgresEnv();
    const binary = await builtBinary();
    const run = async (args: string[]) => {
      const { stdout: out, stderr: err, code } = await runToExit([binary, ...args], { env: childEnv(env) });
      if (code !== 0) throw new Error(`stablegate ${args.join(" ")}: ${code} ${err}`);
      return JSON.parse(out);
    };
    const { api_key } = await run(["account", "create", "--name", "Binary Shop", "--payout-address", PAYOUT]);
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

  test("through PostgreSQL's Unix socket (?host=<directory>): serve and the CLI connect by it, not over TCP", async () => {
    const env = await postgresEnv({ unixSocket: true });
    const url = new URL(env.STABLEGATE_DATABASE_URL!);
    expect(url.searchParams.get("host")).toStartWith("/");
    const created = await runCli(["account", "create", "--name", "Socket Shop", "--payout-address", PAYOUT], env);
    expect([created.code, created.stderr]).toEqual([0, ""]);
    const serve = await startServeProcess(env);
    try {
      const call = api(serve.url, JSON.parse(created.stdout).api_key);
      const payment = await call("/api/v1/payments", { body: { amount: "3.10" } });
      expect(payment.status).toBe(201);
      expect((await call(`/api/v1/payments/${payment.json.id}`)).json).toEqual(payment.json);
      // Read over TCP, from the server's own view: a session on a Unix socket has no client address.
      const tcp = new URL(url);
      tcp.search = "";
      const admin = new SQL(tcp.href, { max: 1 });
      try {
        const sessions = await admin`SELECT client_addr IS NULL AS on_socket, count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1`;
        expect([...sessions].map((row) => [row.on_socket, row.n > 0])).toEqual([[true, true]]);
      } finally {
        await admin.close();
      }
    } finally {
      await serve.stop();
    }
  });

  test("two serves share a database: one holds the chain lease, and a clean stop hands it over at once; one per data directory", async () => {
    const env = await postgresEnv();
    const otherDir = makeTempDir();
    dirs.push(otherDir);
    const first = await startServeProcess(env);
    const second = await startServeProcess({ ...env, STABLEGATE_DATA_DIR: otherDir });
    try {
      // Each replica has a data directory of its own: a second serve on one is refused.
      const twin = spawnServe({ ...env, STABLEGATE_PORT: String(await freePort()) });
      expect(await twin.exited).toBe(1);
      expect(await twin.stderr()).toContain("in use by another stablegate serve");
      const held = async (serve: { url: string }) =>
        (
          (await api(serve.url, TEST_METRICS_TOKEN)("/readyz")).json as {
            leases: Array<{ held: boolean; token: number }>;
          }
        ).leases[0]!;
      const holder = await waitFor(
        async () => ((await held(first)).held ? first : (await held(second)).held ? second : null),
        20_000,
        "one of them to take the chain lease",
      );
      const other = holder === first ? second : first;
      expect((await held(other)).held).toBe(false);
      const { token } = await held(holder);
      // SIGTERM: the holder releases the lease as it stops, so the other need not wait for it to lapse.
      holder.proc.kill("SIGTERM");
      expect(await holder.exited).toBe(0);
      const taken = await waitFor(async () => {
        const lease = await held(other);
        return lease.held && lease;
      }, 20_000);
      expect(taken.token).toBe(token + 1);
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  test("processes starting at the same moment migrate the database once", async () => {
    const env = await postgresEnv();
    const results = await Promise.all(Array.from({ length: 4 }, () => runCli(["account", "list"], env)));
    for (const result of results) expect([result.code, result.stderr]).toEqual([0, ""]);
    const admin = new SQL(env.STABLEGATE_DATABASE_URL!, { max: 1 });
    try {
      const rows = await admin`SELECT version FROM schema_migrations`;
      expect([...rows].map((row) => Number(row.version))).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    } finally {
      await admin.close();
    }
  });
});
