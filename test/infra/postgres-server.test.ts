/**
 * test/support/postgres.ts: the test process's PostgreSQL hands out empty databases of their own,
 * runs with the settings meant for tests, and is gone with the process that started it however
 * that process ends, as the leftover check of `bun run test` sees it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { markedProcesses, postgresClusterName, TEST_RUN_MARKER } from "../../scripts/test-leftovers.ts";
import { createTestDatabase, postgresServer, SHARED_POSTGRES } from "../support/postgres.ts";
import { waitFor } from "../support/wait.ts";

const HELPER = resolve(import.meta.dir, "../support/postgres.ts");

/** Runs `fn` on a connection to `url`, then closes it. */
async function using<T>(url: string, fn: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await fn(sql);
  } finally {
    await sql.close();
  }
}

const tables = (sql: SQL) =>
  sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`.then((rows) => [...rows]);

describe("the tests' PostgreSQL", () => {
  test("each createTestDatabase is a new, empty database on the one server", async () => {
    const [a, b] = [new URL(await createTestDatabase()), new URL(await createTestDatabase())];
    const admin = new URL((await postgresServer()).adminUrl);
    expect(a.protocol).toBe("postgres:");
    expect(a.host).toBe(admin.host);
    expect(b.host).toBe(admin.host);
    expect(a.pathname).not.toBe(b.pathname);
    expect(await using(a.href, tables)).toEqual([]);
    await using(a.href, (sql) => sql`CREATE TABLE only_in_a (x BIGINT)`);
    expect(await using(a.href, tables)).toEqual([{ table_name: "only_in_a" }]);
    expect(await using(b.href, tables)).toEqual([]);
  });

  test("it runs with the settings for tests, and refuses a wrong password", async () => {
    const { adminUrl } = await postgresServer();
    const settings = await using(adminUrl, (sql) =>
      sql`SELECT name, setting FROM pg_settings
           WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'max_connections', 'listen_addresses')
           ORDER BY name`.then((rows) =>
        Object.fromEntries(rows.map((r: { name: string; setting: string }) => [r.name, r.setting])),
      ),
    );
    expect(settings).toEqual({
      fsync: "off",
      full_page_writes: "off",
      listen_addresses: "127.0.0.1",
      max_connections: "1000",
      synchronous_commit: "off",
    });
    const wrong = new URL(adminUrl);
    wrong.password = "wrong";
    expect(using(wrong.href, (sql) => sql`SELECT 1`)).rejects.toThrow(/password authentication failed/);
  });

  test("a durable server, as bench/api.ts takes, is another server with PostgreSQL's durable defaults", async () => {
    const durable = await createTestDatabase("durable");
    const throwaway = await createTestDatabase();
    expect(new URL(durable).host).not.toBe(new URL(throwaway).host);
    const settings = await using(durable, (sql) =>
      sql`SELECT name, setting FROM pg_settings
           WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes') ORDER BY name`.then((rows) =>
        Object.fromEntries(rows.map((r: { name: string; setting: string }) => [r.name, r.setting])),
      ),
    );
    expect(settings).toEqual({ fsync: "on", full_page_writes: "on", synchronous_commit: "on" });
  }, 60_000);

  // A process that starts a server, says where it is, then ends as `how` says. A signal to its
  // process group reaches what it started too, as Ctrl-C in a terminal or `kill -- -pgid` does.
  const ENDINGS: Record<string, { how: "exit" | "throw" | "SIGTERM" | "SIGKILL"; group?: true }> = {
    "exits normally": { how: "exit" },
    fails: { how: "throw" },
    "is stopped by SIGTERM": { how: "SIGTERM" },
    "is killed by SIGKILL": { how: "SIGKILL" },
    "is stopped by SIGTERM to its process group": { how: "SIGTERM", group: true },
    "is killed by SIGKILL to its process group": { how: "SIGKILL", group: true },
  };
  for (const [what, { how, group }] of Object.entries(ENDINGS)) {
    test(`the server and its directory are gone once the process that started it ${what}`, async () => {
      const marker = `postgres-test-${crypto.randomUUID()}`;
      const script = `
        import { readFileSync } from "node:fs";
        import { SQL } from "bun";
        import { postgresServer } from ${JSON.stringify(HELPER)};
        const sql = new SQL((await postgresServer()).adminUrl, { max: 1 });
        const [{ data_directory }] = await sql\`SHOW data_directory\`;
        await sql.close();
        const pid = Number(readFileSync(data_directory + "/postmaster.pid", "utf8").split("\\n")[0]);
        console.log(JSON.stringify({ dataDir: data_directory, pid }));
        if (${JSON.stringify(how)} === "throw") throw new Error("a failing test run");
        if (${JSON.stringify(how)}.startsWith("SIG")) setInterval(() => {}, 1_000);
      `;
      const child = Bun.spawn([process.execPath, "-e", script], {
        // A process group of its own, to be signalled whole.
        detached: group,
        // Without the run's shared server, so that the child starts one of its own.
        env: { ...process.env, [SHARED_POSTGRES]: "", [TEST_RUN_MARKER]: marker },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      try {
        const reader = child.stdout.getReader();
        let said = "";
        while (!said.includes("\n")) {
          const { done, value } = await reader.read();
          if (done)
            throw new Error(`the child ended before starting a server: ${await new Response(child.stderr).text()}`);
          said += new TextDecoder().decode(value);
        }
        const { dataDir, pid } = JSON.parse(said) as { dataDir: string; pid: number };
        const serverDir = resolve(dataDir, "..");
        expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);

        if (how === "SIGTERM" || how === "SIGKILL") {
          // While it runs, the leftover check counts the server: its postmaster and the processes it forked.
          const running = markedProcesses(marker);
          expect(running.map((p) => p.pid)).toContain(pid);
          expect(
            running.filter((p) => p.command.startsWith(`postgres: ${postgresClusterName(marker)}: `)).length,
          ).toBeGreaterThan(0);
          if (group) process.kill(-child.pid, how);
          else child.kill(how as NodeJS.Signals);
        }
        const status = await child.exited;
        expect(status).toBe(how === "exit" ? 0 : how === "throw" ? 1 : 128 + (how === "SIGKILL" ? 9 : 15));
        await waitFor(
          () => markedProcesses(marker).length === 0 && !existsSync(serverDir),
          30_000,
          "the server's processes and directory to be gone",
        );
      } finally {
        child.kill("SIGKILL");
      }
    }, 60_000);
  }
});
