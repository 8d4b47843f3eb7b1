/**
 * Where the store is, as STABLEGATE_DATA_DIR and STABLEGATE_DATABASE_URL say: read by
 * src/config.ts for the server and by the commands that open the store without serving
 * (`account`, `user`, `backup`, `db`), which need nothing else of the configuration.
 */
import type { Env } from "./env.ts";
import { ConfigError } from "./errors.ts";

/** Where the store is: a PostgreSQL URL when one is set, else the SQLite file in the data directory. */
export interface StoreLocation {
  dataDir: string;
  databaseUrl: string | null;
}

const URL_VARIABLE = "STABLEGATE_DATABASE_URL";

export function storeLocationFrom(env: Env): StoreLocation {
  return { dataDir: dataDirFrom(env), databaseUrl: databaseUrl(env) };
}

export function dataDirFrom(env: Env): string {
  return env.STABLEGATE_DATA_DIR?.trim() || "./stablegate-data";
}

/** The store as a log line may name it: never the URL, which holds the password. */
export function describeStore(where: StoreLocation): string {
  if (!where.databaseUrl) return `sqlite in ${where.dataDir}`;
  const url = new URL(where.databaseUrl);
  // libpq's form for a Unix socket: ?host= names the socket's directory, which then wins over the host.
  const socketDir = url.searchParams.get("host");
  if (socketDir?.startsWith("/"))
    return `postgresql at ${url.hostname}${url.pathname} through the Unix socket in ${socketDir}`;
  return `postgresql at ${url.host}${url.pathname}`;
}

function databaseUrl(env: Env): string | null {
  const value = env[URL_VARIABLE]?.trim();
  return value ? checkedDatabaseUrl(value, URL_VARIABLE) : null;
}

/** A postgres:// URL, checked for shape only; a message never repeats it, since it holds the password. */
export function checkedDatabaseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(source, "not a URL; expected postgres://user:password@host:5432/database");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(source, `expected a postgres:// URL, got ${url.protocol}//`);
  }
  if (!url.hostname) {
    throw new ConfigError(
      source,
      "the URL names no host; for a Unix socket name its directory: " +
        "postgres://user:password@localhost/database?host=/var/run/postgresql",
    );
  }
  return value;
}
