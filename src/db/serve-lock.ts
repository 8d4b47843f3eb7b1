import { Database } from "bun:sqlite";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureDataDir, private0600 } from "./index.ts";

/**
 * One `serve` per data directory: two would both send settlements from the relayer key and
 * both deliver every webhook. The lock is an exclusive SQLite transaction held open on a
 * database of its own (`serve.lock`): SQLite takes it with a POSIX record lock, which the
 * kernel drops when the process dies, however it dies. So there is no stale lock to clear
 * after kill -9 or a reboot, and of servers starting at once exactly one gets it.
 * `serve.pid` only tells a second server whom it lost to; nothing decides by it.
 */
export function acquireServeLock(dataDir: string): () => void {
  ensureDataDir(dataDir);
  const lockPath = join(dataDir, "serve.lock");
  const pidPath = join(dataDir, "serve.pid");
  private0600(lockPath);
  const lock = new Database(lockPath);
  try {
    lock.run("PRAGMA busy_timeout = 0");
    lock.run("BEGIN EXCLUSIVE");
  } catch (error) {
    lock.close();
    if (!/locked|busy/i.test((error as Error).message)) throw error;
    throw new Error(`${dataDir} is in use by another stablegate serve${ownerOf(pidPath)}; stop it first`);
  }
  writeFileSync(pidPath, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    rmSync(pidPath, { force: true });
    lock.run("ROLLBACK");
    lock.close();
  };
}

function ownerOf(pidPath: string): string {
  try {
    const pid = Number(readFileSync(pidPath, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? ` (pid ${pid})` : "";
  } catch {
    return "";
  }
}
