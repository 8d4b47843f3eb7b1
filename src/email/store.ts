import { type Db, sqlFor, textsIn } from "../db/engine.ts";

export type EmailState = "pending" | "sent" | "failed";

export interface OutboxRow {
  seq: number;
  id: string;
  dedupe_key: string;
  account_id: string | null;
  payment_id: string | null;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  unsubscribe_url: string | null;
  state: EmailState;
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
}

export type NewEmail = Pick<
  OutboxRow,
  "id" | "dedupe_key" | "account_id" | "payment_id" | "kind" | "recipient" | "subject" | "text_body" | "html_body"
> & { unsubscribe_url?: string | null };

/** What customers are sent and what each dashboard user is told of confirmed payments. */
export type PaymentNotices = "each" | "daily" | "none";

export type EmailStore = ReturnType<typeof createEmailStore>;

/** The outbox and the email settings of accounts and dashboard users. */
export function createEmailStore(db: Db) {
  // The unique dedupe key makes queueing the same email twice a no-op, whoever tries.
  const queue = db.query(
    `INSERT INTO email_outbox (id, dedupe_key, account_id, payment_id, kind, recipient, subject, text_body, html_body,
       unsubscribe_url, state, attempts, next_attempt_at, created_at, updated_at)
     VALUES ($id, $dedupe_key, $account_id, $payment_id, $kind, $recipient, $subject, $text_body, $html_body,
       $unsubscribe_url, 'pending', 0, $now, $now, $now)
     ON CONFLICT (dedupe_key) DO NOTHING`,
  );
  // Claimed as webhook deliveries are (src/webhooks/delivery-store.ts): next_attempt_at moves past
  // the send, so no other worker finds the row due until the claim lapses.
  const claimDue = db.query<OutboxRow, [number, number, number, string]>(
    `UPDATE email_outbox SET next_attempt_at = ?3, claimed_by = ?4
      WHERE id IN (SELECT id FROM email_outbox WHERE state = 'pending' AND next_attempt_at <= ?1
                    ORDER BY next_attempt_at, seq LIMIT ?2${sqlFor(db, "", " FOR UPDATE SKIP LOCKED")})
      RETURNING *`,
  );
  const release = db.query(
    `UPDATE email_outbox SET next_attempt_at = ?1, claimed_by = NULL
      WHERE claimed_by = ?2 AND state = 'pending' AND (CAST(?3 AS TEXT) IS NULL OR id IN (${textsIn(db, "?3")}))`,
  );
  const markSent = db.query(
    `UPDATE email_outbox SET state = 'sent', attempts = attempts + 1, sent_at = ?2, updated_at = ?2,
       claimed_by = NULL, last_error = NULL WHERE id = ?1 AND state = 'pending'`,
  );
  const markFailed = db.query(
    `UPDATE email_outbox SET state = ?2, attempts = attempts + 1, next_attempt_at = ?3, last_error = ?4,
       updated_at = ?5, claimed_by = NULL WHERE id = ?1 AND state = 'pending'`,
  );
  const lastSent = db.query<{ at: number | null }, []>("SELECT max(sent_at) AS at FROM email_outbox");
  const lastError = db.query<{ at: number; error: string; recipient: string; state: EmailState }, []>(
    `SELECT updated_at AS at, last_error AS error, recipient, state FROM email_outbox
      WHERE last_error IS NOT NULL ORDER BY updated_at DESC LIMIT 1`,
  );
  const counts = db.query<{ state: EmailState; n: number }, []>(
    "SELECT state, count(*) AS n FROM email_outbox WHERE state IN ('pending', 'failed') GROUP BY state",
  );
  const purge = db.query(
    `DELETE FROM email_outbox WHERE seq IN (
       SELECT seq FROM email_outbox WHERE state IN ('sent', 'failed') AND updated_at < ? ORDER BY seq LIMIT ?)`,
  );
  const findById = db.query<OutboxRow, [string]>("SELECT * FROM email_outbox WHERE id = ?");
  const listForAccount = db.query<OutboxRow, [string, number]>(
    "SELECT * FROM email_outbox WHERE account_id = ? ORDER BY seq DESC LIMIT ?",
  );

  const customerSetting = db.query<{ customer_emails: number }, [string]>(
    "SELECT customer_emails FROM email_account_settings WHERE account_id = ?",
  );
  const setCustomer = db.query(
    `INSERT INTO email_account_settings (account_id, customer_emails, updated_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (account_id) DO UPDATE SET customer_emails = ?2, updated_at = ?3`,
  );
  const userSetting = db.query<{ payments: PaymentNotices }, [string]>(
    "SELECT payments FROM email_user_settings WHERE user_id = ?",
  );
  const setUser = db.query(
    `INSERT INTO email_user_settings (user_id, payments, updated_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (user_id) DO UPDATE SET payments = ?2, updated_at = ?3`,
  );
  const accountUsers = db.query<{ id: string; email: string; payments: PaymentNotices | null }, [string]>(
    `SELECT u.id, u.email, s.payments FROM dashboard_users u LEFT JOIN email_user_settings s ON s.user_id = u.id
      WHERE u.account_id = ? ORDER BY u.created_at, u.id`,
  );
  const allUsers = db.query<{ id: string; email: string; account_id: string }, []>(
    "SELECT id, email, account_id FROM dashboard_users ORDER BY created_at, id",
  );

  const confirmedBetween = db.query<
    {
      id: string;
      amount: bigint;
      amount_received: bigint | null;
      invoice_number: string | null;
      description: string | null;
    },
    [string, number, number]
  >(
    `SELECT p.id, p.amount, p.amount_received, p.invoice_number, p.description FROM events e
       JOIN payments p ON p.id = e.payment_id
      WHERE e.account_id = ? AND e.type = 'payment.confirmed' AND e.created_at >= ? AND e.created_at < ?
      ORDER BY e.seq`,
  );

  return {
    /** The account's payments confirmed in [from, to), for the daily summary. */
    // Amounts come back as the engine stores them (a number on SQLite): made bigint, as money is.
    confirmedBetween: (accountId: string, from: number, to: number) =>
      confirmedBetween.all(accountId, from, to).map((p) => ({
        ...p,
        amount: BigInt(p.amount),
        amount_received: p.amount_received === null ? null : BigInt(p.amount_received),
      })),
    /** Queues an email unless one with its dedupe key exists; true when this call queued it. */
    queue: (row: NewEmail, now: number): boolean =>
      queue.run({ ...row, unsubscribe_url: row.unsubscribe_url ?? null, now }).changes === 1,
    /** Up to `limit` due emails, claimed for `claimer` until `until`. */
    claimDue: (now: number, limit: number, until: number, claimer: string) => claimDue.all(now, limit, until, claimer),
    /** Gives back `claimer`'s claims (all, or those in `ids`), due at `now`. */
    release: (claimer: string, now: number, ids?: string[]) =>
      release.run(now, claimer, ids === undefined ? null : JSON.stringify(ids)),
    markSent: (id: string, now: number) => markSent.run(id, now),
    /** A failed attempt: due again at `nextAt`, or given up (`failed`) when null. */
    markFailed: (id: string, error: string, nextAt: number | null, now: number) =>
      markFailed.run(id, nextAt === null ? "failed" : "pending", nextAt ?? now, error, now),
    findById: (id: string) => findById.get(id) ?? null,
    /** Deletes up to `limit` emails sent or given up before `before`; how many it deleted. */
    purgeOlderThan: (before: number, limit: number) => purge.run(before, limit).changes,
    listForAccount: (accountId: string, limit: number) => listForAccount.all(accountId, limit),
    /** What /readyz and the settings page say of email. */
    health() {
      const byState = Object.fromEntries(counts.all().map((r) => [r.state, Number(r.n)]));
      const at = lastSent.get()?.at ?? null;
      return {
        lastSentAt: at === null ? null : Number(at),
        lastError: lastError.get() ?? null,
        pending: byState.pending ?? 0,
        failed: byState.failed ?? 0,
      };
    },

    /** Customer emails are on unless the account turned them off. */
    customerEmails: (accountId: string) => (customerSetting.get(accountId)?.customer_emails ?? 1) === 1,
    setCustomerEmails: (accountId: string, on: boolean, now: number) => setCustomer.run(accountId, on ? 1 : 0, now),
    paymentNotices: (userId: string): PaymentNotices => userSetting.get(userId)?.payments ?? "each",
    setPaymentNotices: (userId: string, notices: PaymentNotices, now: number) => setUser.run(userId, notices, now),
    /** The account's dashboard users with what each asked to be told of confirmed payments. */
    accountUsers: (accountId: string) =>
      accountUsers.all(accountId).map((u) => ({ ...u, payments: u.payments ?? ("each" as PaymentNotices) })),
    allUsers: () => allUsers.all(),
  };
}
