/**
 * The store of a test's server, found from the server's `env`. A server running in this process
 * is reached through its own store: a second SQLite connection here would wait (blocking the
 * thread) for a transaction of the server's that cannot go on meanwhile. A server in another
 * process is reached through a store opened for the call.
 */
import type { Db } from "../../src/db/engine.ts";
import { openStore, storeLocationFrom } from "../../src/db/open.ts";

const inProcess = new WeakMap<object, Db>();

/** Called by the helpers that start a server in this process, with the `env` they give it. */
export function registerServerStore(env: object, db: Db | null): void {
  if (db) inProcess.set(env, db);
  else inProcess.delete(env);
}

export async function withServerStore<T>(env: Record<string, string>, use: (db: Db) => Promise<T>): Promise<T> {
  const running = inProcess.get(env);
  if (running) return use(running);
  const db = await openStore(storeLocationFrom(env));
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}
