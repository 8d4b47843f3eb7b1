/**
 * The thread that owns PgDb's one PostgreSQL connection (src/db/postgres.ts). It runs each
 * statement the main thread sends, posts the answer back and wakes the main thread, which waits
 * on `signal` meanwhile. Only one statement is ever in flight.
 */

import { type MessagePort, workerData } from "node:worker_threads";
import { type ReservedSQL, SQL } from "bun";
import { LOST_IN_TRANSACTION, type PgReply, type PgRequest } from "./postgres-protocol.ts";

const { url, signal, port, statementTimeoutMs, idleInTransactionMs } = workerData as {
  url: string;
  signal: SharedArrayBuffer;
  port: MessagePort;
  statementTimeoutMs: number;
  idleInTransactionMs: number;
};
const flag = new Int32Array(signal);
const pool = new SQL(url, { max: 1, bigint: true, idleTimeout: 0, connectionTimeout: 10 });
let connection: ReservedSQL | null = null;
let inTransaction = false;
// Set when the connection dropped inside a transaction: its work is gone, so every statement
// fails until the transaction's end, rather than running on a new connection outside it.
let lostInTransaction = false;

async function answer(request: PgRequest): Promise<PgReply> {
  if (lostInTransaction && !request.ends) {
    return { error: { message: LOST_IN_TRANSACTION, code: "08006" } };
  }
  try {
    connection ??= await connect();
    const result = await connection.unsafe(request.sql, request.params);
    if (request.begins) inTransaction = true;
    return { rows: Array.from(result as Record<string, unknown>[]), changes: Number(result.count ?? 0) };
  } catch (error) {
    const failure = error as Error & { errno?: string; code?: string };
    if (isConnectionLoss(failure)) {
      connection?.release();
      connection = null;
      if (inTransaction) lostInTransaction = true;
    }
    return { error: { message: failure.message, code: failure.errno ?? failure.code ?? null } };
  } finally {
    if (request.ends) inTransaction = lostInTransaction = false;
  }
}

/**
 * SQLSTATE class 08 is a connection exception, 57P01-57P03 a server shutting the session down and
 * 25P03 the session ended for idling in a transaction; Bun reports a closed socket with its own codes.
 */
function isConnectionLoss(error: { errno?: string; code?: string }): boolean {
  const state = error.errno ?? "";
  return (
    state.startsWith("08") || /^57P0[123]$|^25P03$/.test(state) || /CONNECTION|SOCKET|TIMEOUT/.test(error.code ?? "")
  );
}

function reply(message: unknown): void {
  port.postMessage(message);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

/**
 * A connection whose slow statements PostgreSQL cancels before PgDb stops waiting, and which it
 * ends when left idle inside a transaction (see PgOptions).
 */
async function connect(): Promise<ReservedSQL> {
  const reserved = await pool.reserve();
  await reserved.unsafe(`SET statement_timeout = ${Math.trunc(statementTimeoutMs)}`);
  await reserved.unsafe(`SET idle_in_transaction_session_timeout = ${Math.trunc(idleInTransactionMs)}`);
  return reserved;
}

// The first connection is made while PgDb.open waits, so a bad URL fails start-up.
try {
  connection = await connect();
  port.on("message", async (request: PgRequest) => reply(await answer(request)));
  reply({ ready: true });
} catch (error) {
  reply({ ready: false, message: (error as Error).message });
}
