import { type BackupReport, backupDatabase } from "../db/backup.ts";
import { dataDirFrom } from "../db/open.ts";
import { ConfigError } from "../lib/errors.ts";
import { parseArgs, UsageError } from "./args.ts";

type Env = Record<string, string | undefined>;

/**
 * `stablegate backup FILE [--force]`: an online copy of the embedded SQLite store, safe while
 * `serve` runs. A PostgreSQL store is backed up with PostgreSQL's own tools, so with
 * STABLEGATE_DATABASE_URL set the command refuses as a configuration mismatch (exit 78).
 */
export function runBackup(argv: string[], env: Env): BackupReport {
  const { positionals, flags } = parseArgs(argv, { force: { type: "boolean" } }, 1);
  const file = positionals[0];
  if (!file) throw new UsageError("usage: stablegate backup FILE [--force]");
  // The URL may carry a password: the message names the variable, never its value.
  if (env.STABLEGATE_DATABASE_URL?.trim())
    throw new ConfigError(
      "STABLEGATE_DATABASE_URL",
      "selects PostgreSQL, and stablegate backup copies only the embedded SQLite store; back up PostgreSQL " +
        "with pg_dump or a streaming replica (docs/backups.md)",
    );
  return backupDatabase(dataDirFrom(env), file, { force: flags.get("force") === true });
}
