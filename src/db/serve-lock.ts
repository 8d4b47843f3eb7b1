import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * One `serve` per data directory: two would both send settlements from the relayer key and
 * both deliver every webhook. The lock is a file holding the owner's pid; a lock whose process
 * is gone (after kill -9, say) is taken over.
 */
export function acquireServeLock(dataDir: string): () => void {
  const path = join(dataDir, "serve.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number(readFileSync(path, "utf8").trim());
      // Our own pid in the file is a leftover: in a container the server is pid 1 every time.
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(`${dataDir} is in use by another stablegate serve (pid ${owner}); stop it first`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
