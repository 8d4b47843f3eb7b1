import { type CopyReport, copySqliteToPostgres } from "../db/copy.ts";
import { checkedDatabaseUrl, dataDirFrom } from "../db/open.ts";
import { parseArgs, UsageError } from "./args.ts";

type Env = Record<string, string | undefined>;

const USAGE = "usage: stablegate db copy [--to postgres://...]";

/**
 * `stablegate db copy [--to URL]`: moves the SQLite store of STABLEGATE_DATA_DIR into an empty
 * PostgreSQL database, the target being --to or else STABLEGATE_DATABASE_URL (which keeps the
 * password out of the process list). The server must be stopped; the report gives the rows
 * copied per table, each verified equal in the target.
 */
export async function runDbCommand(argv: string[], env: Env): Promise<CopyReport> {
  const [action, ...rest] = argv;
  if (action !== "copy") throw new UsageError(action ? `unknown command: db ${action}` : USAGE);
  const { flags } = parseArgs(rest, { to: { type: "string" } }, 0);
  const given = flags.get("to");
  const url =
    typeof given === "string"
      ? checkedDatabaseUrl(given, "--to")
      : env.STABLEGATE_DATABASE_URL?.trim()
        ? checkedDatabaseUrl(env.STABLEGATE_DATABASE_URL.trim(), "STABLEGATE_DATABASE_URL")
        : null;
  if (!url) throw new UsageError(`${USAGE} (or STABLEGATE_DATABASE_URL set)`);
  return copySqliteToPostgres(dataDirFrom(env), url);
}
