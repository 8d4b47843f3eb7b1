/**
 * `stablegate backup FILE` against a real `serve` process that keeps creating payments over
 * HTTP: the copy is consistent, complete up to its start, owner-only, and a fresh server runs on
 * it; an existing FILE, a missing directory, a failed copy and a kill -9 never leave a partial
 * or replaced file behind.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { sql } from "../../src/db/engine.ts";
import { openDb } from "../../src/db/index.ts";
import { SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { runCli } from "../support/cli.ts";
import { childEnv, MAIN, type ServeProcess, startServeProcess } from "../support/serve-process.ts";
import { type Api, api, makeTempDir, TEST_PAYOUT, testEnv } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let dataDir: string;
let env: Record<string, string>;
let server: ServeProcess;
let apiKey: string;
let merchant: Api;
const dirs: string[] = [];

beforeAll(async () => {
  dataDir = tempDir();
  env = testEnv(dataDir);
  ({ api_key: apiKey } = (await runAccountCommand(
    "account",
    ["create", "--name", "Backup Shop", "--payout-address", TEST_PAYOUT],
    env,
  )) as { api_key: string });
  server = await startServeProcess(env);
  merchant = api(server.url, apiKey);
});
afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = makeTempDir("stablegate-backup-");
  dirs.push(dir);
  return dir;
}

const backup = (args: string[], extra: Record<string, string> = {}) =>
  runCli(["backup", ...args], { ...env, ...extra });
const mode = (path: string) => statSync(path).mode & 0o777;

/** Creates payments over HTTP, `lanes` requests at a time, until stopped; each 201's id and amount in answer order. */
function keepCreating(lanes = 4) {
  const acknowledged: Array<{ id: string; amount: string }> = [];
  const refused: string[] = [];
  let next = 1;
  let stopping = false;
  const lane = async () => {
    while (!stopping) {
      const amount = `${next++}.00`;
      const res = await merchant("/api/v1/payments", { body: { amount } });
      if (res.status === 201) acknowledged.push({ id: res.json.id, amount });
      else refused.push(`${res.status} ${res.text}`);
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, lane));
  return {
    acknowledged,
    refused,
    async stop() {
      stopping = true;
      await running;
    },
  };
}

describe("stablegate backup", () => {
  test("a copy taken while payments are created holds every one acknowledged before it began, and a fresh server runs on it", async () => {
    const out = tempDir();
    const file = join(out, "stablegate-backup.db");
    const writer = keepCreating();
    try {
      await waitFor(() => writer.acknowledged.length >= 20, 30_000, "20 payments created");
      const before = [...writer.acknowledged];
      const result = await backup([file]);
      const duringBackup = writer.acknowledged.length - before.length;
      await writer.stop();
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(writer.refused).toEqual([]);
      // Payments were being created while the backup ran (that a write never waits for it is tested below).
      expect(duringBackup).toBeGreaterThan(0);

      const lines = result.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      const report = JSON.parse(lines[0]!);
      expect(report).toMatchObject({
        path: file,
        bytes: statSync(file).size,
        schema_version: SQLITE_MIGRATIONS.at(-1)!.version,
      });
      expect(report.rows.accounts).toBe(1);
      expect(mode(file)).toBe(0o600);
      expect(readdirSync(out)).toEqual(["stablegate-backup.db"]);

      const copy = new Database(file, { readonly: true });
      let inCopy: Set<string>;
      try {
        expect(copy.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
        inCopy = new Set(
          copy
            .query<{ id: string }, []>("SELECT id FROM payments")
            .all()
            .map((p) => p.id),
        );
        expect(report.rows.payments).toBe(inCopy.size);
        // One snapshot: the per-status counters (folded counts and the deltas the triggers append in each
        // insert's transaction, migration 024) match the rows.
        const counted = copy
          .query<{ n: number }, []>(
            `SELECT coalesce(sum(n), 0) AS n
               FROM (SELECT n FROM payment_status_counts UNION ALL SELECT n FROM payment_status_deltas)`,
          )
          .get();
        expect(counted!.n).toBe(inCopy.size);
      } finally {
        copy.close();
      }
      expect(before.filter((p) => !inCopy.has(p.id))).toEqual([]);
      // Nothing in the copy that the server did not acknowledge.
      const acknowledged = new Set(writer.acknowledged.map((p) => p.id));
      expect([...inCopy].filter((id) => !acknowledged.has(id))).toEqual([]);

      // Restored into another data directory, the copy serves the payments as they were.
      const restoredDir = tempDir();
      copyFileSync(file, join(restoredDir, "stablegate.db"));
      const restored = await startServeProcess(testEnv(restoredDir));
      try {
        const merchantOnCopy = api(restored.url, apiKey);
        for (const { id, amount } of [before[0]!, before.at(-1)!]) {
          const res = await merchantOnCopy(`/api/v1/payments/${id}`);
          expect({ status: res.status, id: res.json.id, amount: res.json.amount }).toEqual({ status: 200, id, amount });
        }
      } finally {
        await restored.stop();
      }
    } finally {
      await writer.stop();
    }
  });

  test("the copy holds what is committed only in the WAL and nothing of a write still open, which does not hold it up", async () => {
    const dir = tempDir();
    const db = openDb(dir);
    try {
      // Left in the WAL (no checkpoint copies it into stablegate.db), as a busy server leaves its latest writes.
      await db.exec("PRAGMA wal_autocheckpoint = 0");
      const accounts = createAccountsService({ store: createAccountStore(db), clock: systemClock, ids: randomIds });
      const committed: string[] = [];
      for (const name of ["Committed One", "Committed Two"])
        committed.push((await accounts.createAccount({ name, payoutAddress: TEST_PAYOUT })).account.id);
      const out = tempDir();
      // The transaction (IMMEDIATE) holds the write lock while the backup runs; it commits after.
      const { open, result } = await db.transaction(async () => {
        const open = (await accounts.createAccount({ name: "Still Open", payoutAddress: TEST_PAYOUT })).account.id;
        return { open, result: await backup([join(out, "b.db")], { STABLEGATE_DATA_DIR: dir }) };
      });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).rows.accounts).toBe(2);
      const copy = new Database(join(out, "b.db"), { readonly: true });
      try {
        const ids = copy
          .query<{ id: string }, []>("SELECT id FROM accounts")
          .all()
          .map((a) => a.id);
        expect(ids.sort()).toEqual(committed.sort());
        expect(ids).not.toContain(open);
      } finally {
        copy.close();
      }
    } finally {
      await db.close();
    }
  });

  test("an existing FILE is refused and left as it was (exit 1); --force replaces it with a verified copy", async () => {
    const out = tempDir();
    const file = join(out, "nightly.db");
    writeFileSync(file, "yesterday's backup", { mode: 0o640 });
    const refused = await backup([file]);
    expect(refused).toEqual({
      code: 1,
      stdout: "",
      stderr: `stablegate: ${file} already exists; choose another name, or pass --force to replace it\n`,
    });
    expect(readFileSync(file, "utf8")).toBe("yesterday's backup");
    expect(mode(file)).toBe(0o640);
    expect(readdirSync(out)).toEqual(["nightly.db"]);

    const forced = await backup([file, "--force"]);
    expect(forced.stderr).toBe("");
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout).path).toBe(file);
    expect(mode(file)).toBe(0o600);
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    } finally {
      copy.close();
    }
    expect(readdirSync(out)).toEqual(["nightly.db"]);
  });

  test("a FILE in a directory that does not exist: one clear line, exit 1, nothing created", async () => {
    const out = tempDir();
    const missing = join(out, "missing");
    const result = await backup([join(missing, "b.db")]);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: `stablegate: cannot write ${join(missing, "b.db")}: no directory ${missing}\n`,
    });
    expect(readdirSync(out)).toEqual([]);
  });

  test("a copy that fails half-way leaves neither FILE nor its temporary file", async () => {
    // A stopped server's data directory whose database is damaged past its first page.
    const broken = tempDir();
    await openDb(broken).close();
    const db = join(broken, "stablegate.db");
    const pages = readFileSync(db);
    pages.fill(0xa5, 4096);
    writeFileSync(db, pages);
    const out = tempDir();
    const result = await backup([join(out, "b.db")], { STABLEGATE_DATA_DIR: broken });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^stablegate: cannot copy .*stablegate\.db: database disk image is malformed\n$/);
    expect(readdirSync(out)).toEqual([]);
  });

  test("kill -9 during the copy leaves no file under FILE, only its temporary files; the next run succeeds", async () => {
    // Big enough that the copy is still being written when the test sees its temporary file.
    const big = tempDir();
    const seed = openDb(big);
    await seed.exec("CREATE TABLE filler (blob BLOB NOT NULL)");
    await seed.transaction(async () => {
      for (let i = 0; i < 20_000; i++) await seed.run(sql`INSERT INTO filler (blob) VALUES (randomblob(4000))`);
    });
    await seed.close();
    const out = tempDir();
    const file = join(out, "b.db");
    const proc = Bun.spawn([process.execPath, MAIN, "backup", file], {
      env: childEnv({ STABLEGATE_DATA_DIR: big }),
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      // Whatever the copy is being written to, FILE or another name, once it has begun.
      const writing = await waitFor(
        () => readdirSync(out).find((name) => !name.endsWith("-journal") && statSync(join(out, name)).size > 0),
        30_000,
        "the copy to be under way",
        5,
      );
      proc.kill("SIGKILL");
      await proc.exited;
      // What the crash left is the temporary file (and SQLite's journal of it), never FILE.
      expect(existsSync(file)).toBe(false);
      expect(writing).toMatch(/^b\.db\.tmp-[0-9a-f]{8}$/);
      expect(readdirSync(out).filter((name) => !name.startsWith(writing))).toEqual([]);
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
    }
    const again = await backup([file], { STABLEGATE_DATA_DIR: big });
    expect(again.code).toBe(0);
    expect(readdirSync(out).filter((name) => !name.startsWith("b.db.tmp-"))).toEqual(["b.db"]);
  });

  test("a FILE in the data directory is refused, even with --force, and the live database is untouched", async () => {
    const live = join(dataDir, "stablegate.db");
    const inode = statSync(live).ino;
    for (const name of ["stablegate.db", "relayer.key", "elsewhere.db"]) {
      const result = await backup([join(dataDir, name), "--force"]);
      expect(result).toEqual({
        code: 1,
        stdout: "",
        stderr: `stablegate: ${join(dataDir, name)} is in the data directory; write the backup somewhere else\n`,
      });
    }
    expect(statSync(live).ino).toBe(inode);
    expect(existsSync(join(dataDir, "elsewhere.db"))).toBe(false);
    expect((await merchant("/api/v1/payments")).status).toBe(200);
  });

  test("with STABLEGATE_DATABASE_URL set it refuses (exit 78) and points at pg_dump, never echoing the URL", async () => {
    const out = tempDir();
    const result = await backup([join(out, "b.db")], {
      STABLEGATE_DATABASE_URL: "postgres://stablegate:hunter2-secret@db.internal:5432/stablegate",
    });
    expect(result.code).toBe(78);
    expect(result.stdout).toBe("");
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr).toStartWith("stablegate: STABLEGATE_DATABASE_URL: ");
    expect(result.stderr).toContain("pg_dump");
    expect(result.stderr).not.toContain("hunter2");
    expect(result.stderr).not.toContain("db.internal");
    expect(readdirSync(out)).toEqual([]);
  });

  test("a data directory without a database: exit 78, and nothing is created there", async () => {
    const out = tempDir();
    const nowhere = join(out, "no-data-dir");
    const result = await backup([join(out, "b.db")], { STABLEGATE_DATA_DIR: nowhere });
    expect(result).toEqual({
      code: 78,
      stdout: "",
      stderr: `stablegate: STABLEGATE_DATA_DIR: no Stablegate database at ${join(nowhere, "stablegate.db")}\n`,
    });
    expect(readdirSync(out)).toEqual([]);
  });

  test("usage mistakes exit 2; --help lists the command", async () => {
    expect(await backup([])).toMatchObject({
      code: 2,
      stderr: "stablegate: usage: stablegate backup FILE [--force] (see stablegate --help)\n",
    });
    expect((await backup(["a.db", "b.db"])).code).toBe(2);
    expect((await backup(["a.db", "--overwrite"])).code).toBe(2);
    expect((await runCli(["--help"], {})).stdout).toContain("stablegate backup FILE [--force]");
  });
});
