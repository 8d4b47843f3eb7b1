/** What the main thread sends PgDb's worker: one statement, already in PostgreSQL's `$n` form. */
export interface PgRequest {
  sql: string;
  params: unknown[];
  /** BEGIN: from here on, a lost connection fails the transaction rather than being replaced. */
  begins?: boolean;
  /** COMMIT or ROLLBACK: the transaction ends whatever the answer. */
  ends?: boolean;
}

export type PgReply =
  | { rows: Record<string, unknown>[]; changes: number; error?: undefined }
  | { error: { message: string; code: string | null } };

/** A transaction whose connection went away: what its remaining statements fail with, until it ends. */
export const LOST_IN_TRANSACTION = "the connection to PostgreSQL was lost inside a transaction";
