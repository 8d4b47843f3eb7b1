import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { randomHex } from "./ids.ts";

/**
 * This replica, as leases name their holder and webhook claims their claimer: its host name and
 * an id kept in its data directory, made on the first start. The same across restarts, so a
 * replica restarted after kill -9 takes its own lease back at once; never another live replica's,
 * as each holds its data directory's serve lock.
 */
export function replicaName(dataDir: string): string {
  const path = join(dataDir, "replica-id");
  if (!existsSync(path)) writeFileSync(path, `${randomHex(8)}\n`, { mode: 0o600, flag: "wx" });
  return `${hostname()}:${readFileSync(path, "utf8").trim()}`;
}
