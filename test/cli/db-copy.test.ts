/**
 * `stablegate db copy`: a SQLite store with payments, a payment link, a webhook endpoint, its
 * delivery and events, copied into an empty real PostgreSQL database by the real command; then a
 * server on PostgreSQL answers the same API key with the same objects, byte for byte, and new
 * rows take ids after the copied ones. Refusals leave the target as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { raw, sql } from "../../src/db/engine.ts";
import { SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { openStore } from "../../src/db/open.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { api, startTestServer, TEST_BASE_URL, type TestAccount, type TestServer } from "../support/server.ts";

let source: TestServer;
let account: TestAccount;
/** What the SQLite server answered, by path, before the copy. */
const before = new Map<string, string>();
const paths: string[] = [];

beforeAll(async () => {
  source = await startTestServer({ databaseUrl: null, webhookAllowPrivate: true });
  account = await source.createAccount("Copied Shop");
  const call = api(source.url, account.apiKey);
  for (const amount of ["1.00", "2.50", "12345.67"]) {
    const res = await call("/api/v1/payments", {
      body: { amount, description: `Order ${amount}`, metadata: { order: amount, note: "ünïcødé ✓" } },
    });
    expect([res.status, res.text]).toEqual([201, res.text]);
    paths.push(`/api/v1/payments/${res.json.id}`, `/api/public/payments/${res.json.id}`);
  }
  const link = await call("/api/v1/payment_links", { body: { amount: "4.00", description: "A link" } });
  expect(link.status).toBe(201);
  paths.push(`/api/v1/payment_links/${link.json.id}`);
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: "http://127.0.0.1:1/hooks" } });
  expect(endpoint.status).toBe(201);
  const sent = await call(`/api/v1/webhook_endpoints/${endpoint.json.id}/test`, { method: "POST" });
  expect(sent.status).toBe(202);
  paths.push("/api/v1/webhook_endpoints", "/api/v1/events?limit=100");
  // The data dir stays: the tests copy it, and run servers on it.
  await source.running.stop();
});
afterAll(() => rmSync(source.dataDir, { recursive: true, force: true }));

/** Servers on the copied store, with one base URL so payment links compare equal. */
const serveEnv = (extra: Record<string, string> = {}) => ({
  ...source.env,
  STABLEGATE_BASE_URL: TEST_BASE_URL,
  ...extra,
});

const copy = (args: string[], extra: Record<string, string> = {}) =>
  runCli(["db", "copy", ...args], { ...source.env, ...extra });

async function countsIn(url: string): Promise<Record<string, number>> {
  const db = await openStore({ dataDir: source.dataDir, databaseUrl: url });
  try {
    const tables = await db.all<{ name: string }>(
      sql`SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'`,
    );
    const counts: Record<string, number> = {};
    for (const { name } of tables)
      counts[name] = (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ${raw(name)}`))!.n;
    return counts;
  } finally {
    await db.close();
  }
}

describe("stablegate db copy", () => {
  test("copies every row, and a server on PostgreSQL answers as the SQLite one did", async () => {
    // The answers of the SQLite store, from a server of its own.
    const sqlite = await startServeProcess(serveEnv());
    try {
      for (const path of paths) before.set(path, (await api(sqlite.url, account.apiKey)(path)).text);
    } finally {
      await sqlite.stop();
    }
    const url = await createTestDatabase();
    const result = await copy(["--to", url]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { rows: Record<string, number>; schema_version: number };
    expect(report.schema_version).toBe(SQLITE_MIGRATIONS.at(-1)!.version);
    expect(report.rows.payments).toBe(3);
    expect(report.rows.payment_links).toBe(1);
    expect(report.rows.webhook_deliveries).toBe(1);
    expect(report.rows.events).toBeGreaterThan(0);
    // Every table of the target holds what the report says was copied.
    const counts = await countsIn(url);
    for (const [table, n] of Object.entries(report.rows)) expect([table, counts[table]]).toEqual([table, n]);

    const pg = await startServeProcess(serveEnv({ STABLEGATE_DATABASE_URL: url }));
    try {
      const call = api(pg.url, account.apiKey);
      for (const path of paths) expect([path, (await call(path)).text]).toEqual([path, before.get(path)!]);
      // Identities moved past the copied rows: a new payment is created, and listed first.
      const created = await call("/api/v1/payments", { body: { amount: "9.00" } });
      expect(created.status).toBe(201);
      const listed = await call("/api/v1/payments?limit=4");
      expect(listed.json.data.map((p: { id: string }) => p.id)).toEqual([
        created.json.id,
        ...paths
          .filter((p) => p.startsWith("/api/v1/payments/"))
          .map((p) => p.split("/").pop())
          .reverse(),
      ]);
    } finally {
      await pg.stop();
    }
  });

  test("a target that is not empty is refused and left as it was", async () => {
    const url = await createTestDatabase();
    expect((await copy(["--to", url])).code).toBe(0);
    const counts = await countsIn(url);
    const again = await copy([], { STABLEGATE_DATABASE_URL: url });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("the target database is not empty");
    expect(await countsIn(url)).toEqual(counts);
  });

  test("refused while a server runs on the data directory", async () => {
    const running = await startServeProcess(source.env);
    try {
      const url = await createTestDatabase();
      const result = await copy(["--to", url]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("stop it before copying");
      expect((await countsIn(url)).payments).toBe(0);
    } finally {
      await running.stop();
    }
  });

  test("a bad URL is a configuration error that never shows the password", async () => {
    const url = new URL(await createTestDatabase());
    url.password = "Sekrit-pw-42";
    const wrong = await copy(["--to", url.href]);
    expect(wrong.code).toBe(78);
    expect(wrong.stderr).toContain("cannot connect");
    expect(wrong.stderr + wrong.stdout).not.toContain("Sekrit-pw-42");
    const notPostgres = await copy(["--to", "mysql://u:Sekrit-pw-42@h/db"]);
    expect(notPostgres.code).toBe(78);
    expect(notPostgres.stderr + notPostgres.stdout).not.toContain("Sekrit-pw-42");
    expect((await copy([])).code).toBe(2);
  });
});
