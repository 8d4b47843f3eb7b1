import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sql } from "../../src/db/engine.ts";
import { migrate, openDb, WAL_CHECKPOINT_PAGES } from "../../src/db/index.ts";
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { ConfigError } from "../../src/lib/errors.ts";
import { makeTempDir } from "../support/server.ts";

const REPO_ROOT = resolve(import.meta.dir, "../..");
const MIGRATIONS_DIR = join(REPO_ROOT, "migrations");

const dirs: string[] = [];
const tempDir = () => {
  const dir = makeTempDir("stablegate-db-");
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const appliedVersions = (db: ReturnType<typeof openDb>) =>
  db.all<{ version: number; name: string }>(sql`SELECT version, name FROM schema_migrations ORDER BY version`);
const accountCount = async (db: ReturnType<typeof openDb>) =>
  (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM accounts`))!.n;

describe("migrations", () => {
  const engines = [
    { folder: "sqlite", list: SQLITE_MIGRATIONS, first: 1 },
    { folder: "postgres", list: POSTGRES_MIGRATIONS, first: 14 },
  ] as const;

  for (const { folder, list, first } of engines) {
    test(`every file in migrations/${folder}/ is listed in src/db/migrations.ts, in order from ${first}, with its exact text`, () => {
      const dir = join(MIGRATIONS_DIR, folder);
      const files = readdirSync(dir)
        .filter((f) => f.endsWith(".sql"))
        .sort();
      expect(files.length).toBeGreaterThan(0);
      expect(list.map((m) => m.name)).toEqual(files);
      list.forEach((m, i) => {
        expect(m.version).toBe(first + i);
        expect(m.name).toMatch(/^\d{3}_[a-z0-9_]+\.sql$/);
        expect(Number(m.name.slice(0, 3))).toBe(m.version);
        expect(m.sql).toBe(readFileSync(join(dir, m.name), "utf8"));
      });
    });
  }

  test("both engines reach the same version, through files of the same names after 014", () => {
    const after014 = (list: ReadonlyArray<{ version: number; name: string }>) =>
      list.filter((m) => m.version > 14).map((m) => m.name);
    expect(POSTGRES_MIGRATIONS.at(-1)!.version).toBe(SQLITE_MIGRATIONS.at(-1)!.version);
    expect(after014(POSTGRES_MIGRATIONS)).toEqual(after014(SQLITE_MIGRATIONS));
  });

  test("migrations/ holds one folder per engine, each with nothing but .sql files", () => {
    expect(readdirSync(MIGRATIONS_DIR).sort()).toEqual(["postgres", "sqlite"]);
    for (const { folder } of engines)
      expect(readdirSync(join(MIGRATIONS_DIR, folder)).filter((f) => !f.endsWith(".sql"))).toEqual([]);
  });

  test("a fresh database records every migration once", async () => {
    const db = openDb(tempDir());
    try {
      expect(await appliedVersions(db)).toEqual(SQLITE_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    } finally {
      await db.close();
    }
  });

  test("migrate is idempotent: running it again, or reopening, changes nothing", async () => {
    const dir = tempDir();
    const db = openDb(dir);
    try {
      await db.run(
        sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_x', 'X', '0x1111111111111111111111111111111111111111', NULL, 1)`,
      );
      const schema = () => db.all<{ sql: string | null }>(sql`SELECT sql FROM sqlite_master ORDER BY name`);
      const before = await schema();
      migrate(db.database);
      migrate(db.database);
      expect(await schema()).toEqual(before);
      expect(await appliedVersions(db)).toHaveLength(SQLITE_MIGRATIONS.length);
      expect(await accountCount(db)).toBe(1);
    } finally {
      await db.close();
    }
    const again = openDb(dir);
    try {
      expect(await appliedVersions(again)).toHaveLength(SQLITE_MIGRATIONS.length);
      expect(await accountCount(again)).toBe(1);
    } finally {
      await again.close();
    }
  });
});

describe("openDb", () => {
  test("a second handle's write while the first holds a transaction open waits its turn rather than locking the thread", async () => {
    const dir = tempDir();
    const a = openDb(dir);
    const b = openDb(dir);
    const insert = (id: string) =>
      sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at)
          VALUES (${id}, 'T', '0x1111111111111111111111111111111111111111', NULL, 1)`;
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const held = a.transaction(async () => {
        await a.run(insert("acct_t1"));
        await gate;
      });
      await Bun.sleep(0);
      // A second connection of this process would wait here for the lock (busy_timeout), blocking the
      // thread the transaction needs to finish, and fail with SQLITE_BUSY.
      const write = b.run(insert("acct_t2"));
      release();
      await held;
      expect(await write).toBe(1);
      expect(await accountCount(b)).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("two handles on the same file at once: each sees the other's writes, and closing one leaves the other open", async () => {
    const dir = tempDir();
    const a = openDb(dir);
    const b = openDb(dir);
    // Another process's connection: one process holds one connection per file (src/db/index.ts).
    const other = new Database(join(dir, "stablegate.db"), { readonly: true });
    const othersCount = () => (other.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n;
    try {
      await a.run(
        sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_a', 'A', '0x1111111111111111111111111111111111111111', NULL, 1)`,
      );
      expect((await b.get<{ name: string }>(sql`SELECT name FROM accounts WHERE id = 'acct_a'`))?.name).toBe("A");
      await b.run(
        sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_b', 'B', '0x1111111111111111111111111111111111111111', NULL, 2)`,
      );
      expect(await accountCount(a)).toBe(2);
      // A reader is not blocked by an open write transaction, and does not see it (WAL).
      await a.transaction(async () => {
        await a.run(
          sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_c', 'C', '0x1111111111111111111111111111111111111111', NULL, 3)`,
        );
        expect(othersCount()).toBe(2);
      });
      expect(othersCount()).toBe(3);
      await a.close();
      await a.close(); // twice is once: b's hold stays
      expect(await accountCount(b)).toBe(3);
    } finally {
      other.close();
      await a.close();
      await b.close();
    }
  });

  test("several processes opening a fresh data dir at once apply each migration exactly once", async () => {
    const dir = join(tempDir(), "data");
    const script = `import { openDb } from ${JSON.stringify(join(REPO_ROOT, "src/db/index.ts"))}; await openDb(${JSON.stringify(dir)}).close();`;
    const procs = Array.from({ length: 4 }, () =>
      Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "pipe" }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()));
    expect({ codes, errors }).toEqual({ codes: [0, 0, 0, 0], errors: ["", "", "", ""] });
    const db = openDb(dir);
    try {
      expect(await appliedVersions(db)).toHaveLength(SQLITE_MIGRATIONS.length);
    } finally {
      await db.close();
    }
  });

  test("WAL mode, full sync, foreign keys, a busy timeout, in-memory sub-journals and the checkpoint interval are on", async () => {
    const db = openDb(tempDir());
    try {
      expect((await db.get<{ journal_mode: string }>(sql`PRAGMA journal_mode`))!.journal_mode).toBe("wal");
      expect((await db.get<{ foreign_keys: number }>(sql`PRAGMA foreign_keys`))!.foreign_keys).toBe(1);
      expect((await db.get<{ synchronous: number }>(sql`PRAGMA synchronous`))!.synchronous).toBe(2); // FULL
      expect((await db.get<{ timeout: number }>(sql`PRAGMA busy_timeout`))!.timeout).toBeGreaterThan(0);
      // Savepoints' sub-journals in memory, never a temporary file (src/db/index.ts says why).
      expect((await db.get<{ temp_store: number }>(sql`PRAGMA temp_store`))!.temp_store).toBe(2); // MEMORY
      expect((await db.get<{ wal_autocheckpoint: number }>(sql`PRAGMA wal_autocheckpoint`))!.wal_autocheckpoint).toBe(
        WAL_CHECKPOINT_PAGES,
      );
    } finally {
      await db.close();
    }
  });

  test("the data dir is created 0700", async () => {
    const dir = join(tempDir(), "nested", "data");
    await openDb(dir).close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test("an existing, more open data dir is tightened to 0700", async () => {
    const dir = join(tempDir(), "data");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    await openDb(dir).close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test("the database and its -wal and -shm files are 0600, even under a permissive umask", async () => {
    const dir = tempDir();
    const umask = process.umask(0o022);
    let db: ReturnType<typeof openDb>;
    try {
      db = openDb(dir);
    } finally {
      process.umask(umask);
    }
    try {
      await db.run(
        sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_a', 'A', '0x1111111111111111111111111111111111111111', NULL, 1)`,
      );
      const modes = Object.fromEntries(
        ["stablegate.db", "stablegate.db-wal", "stablegate.db-shm"].map((f) => [
          f,
          statSync(join(dir, f)).mode & 0o777,
        ]),
      );
      expect(modes).toEqual({ "stablegate.db": 0o600, "stablegate.db-wal": 0o600, "stablegate.db-shm": 0o600 });
    } finally {
      await db.close();
    }
  });

  test("a database file left 0644 by an older version is tightened to 0600", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "stablegate.db"), "", { mode: 0o644 });
    chmodSync(join(dir, "stablegate.db"), 0o644);
    await openDb(dir).close();
    expect(statSync(join(dir, "stablegate.db")).mode & 0o777).toBe(0o600);
  });

  test("a data dir that cannot be created is a configuration error naming STABLEGATE_DATA_DIR", () => {
    expect(() => openDb("/proc/nope")).toThrow(ConfigError);
    expect(() => openDb("/proc/nope")).toThrow(/^STABLEGATE_DATA_DIR: cannot create or use \/proc\/nope/);
  });

  test("foreign keys are enforced: a key cannot point at a missing account", async () => {
    const db = openDb(tempDir());
    try {
      await expect(
        db.run(
          sql`INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES ('key_x', 'acct_missing', 'h', 'abcd', 1)`,
        ),
      ).rejects.toThrow();
    } finally {
      await db.close();
    }
  });
});
