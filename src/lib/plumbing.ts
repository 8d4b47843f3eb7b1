import type { GroupCommit } from "../db/group-commit.ts";
import type { Db } from "../db/index.ts";
import type { Clock } from "./clock.ts";
import type { IdGenerator } from "./ids.ts";
import type { Logger } from "./log.ts";

/**
 * The shared plumbing every capability's factory takes beside its slice of the configuration,
 * built once by src/server.ts and passed down explicitly (Ponder's `common`). Time and ids are
 * injected so that tests control them.
 */
export interface Plumbing {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** Batches the commits of concurrent writes (see src/db/group-commit.ts). */
  groupCommit: GroupCommit;
  /** This replica, as leases and webhook claims name it (src/lib/replica.ts). */
  replica: string;
}
