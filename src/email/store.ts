import { type Db, sql, sqlFor, textsIn } from "../db/engine.ts";

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
  const SKIP_LOCKED = sqlFor(db, sql``, sql` FOR UPDATE SKIP LOCKED`);

  return {
    /** The account's payments confirmed in [from, to), for the daily summary. */
    // Amounts come back as the engine stores them (a number on SQLite): made bigint, as money is.
    confirmedBetween: async (accountId: string, from: number, to: number) =>
      (
        await db.all<{
          id: string;
          amount: bigint;
          amount_received: bigint | null;
          invoice_number: string | null;
          description: string | null;
        }>(
          sql`SELECT p.id, p.amount, p.amount_received, p.invoice_number, p.description FROM events e
                JOIN payments p ON p.id = e.payment_id
               WHERE e.account_id = ${accountId} AND e.type = 'payment.confirmed'
                 AND e.created_at >= ${from} AND e.created_at < ${to}
               ORDER BY e.seq`,
        )
      ).map((p) => ({
        ...p,
        amount: BigInt(p.amount),
        amount_received: p.amount_received === null ? null : BigInt(p.amount_received),
      })),
    /**
     * Queues an email unless one with its dedupe key exists; true when this call queued it. The
     * unique dedupe key makes queueing the same email twice a no-op, whoever tries.
     */
    queue: async (row: NewEmail, now: number): Promise<boolean> =>
      (await db.run(
        sql`INSERT INTO email_outbox (id, dedupe_key, account_id, payment_id, kind, recipient, subject, text_body,
              html_body, unsubscribe_url, state, attempts, next_attempt_at, created_at, updated_at)
            VALUES (${row.id}, ${row.dedupe_key}, ${row.account_id}, ${row.payment_id}, ${row.kind}, ${row.recipient},
              ${row.subject}, ${row.text_body}, ${row.html_body}, ${row.unsubscribe_url ?? null}, 'pending', 0, ${now},
              ${now}, ${now})
            ON CONFLICT (dedupe_key) DO NOTHING`,
      )) === 1,
    /**
     * Up to `limit` due emails, claimed for `claimer` until `until`. Claimed as webhook deliveries
     * are (src/webhooks/delivery-store.ts): next_attempt_at moves past the send, so no other
     * worker finds the row due until the claim lapses.
     */
    claimDue: (now: number, limit: number, until: number, claimer: string) =>
      db.all<OutboxRow>(
        sql`UPDATE email_outbox SET next_attempt_at = ${until}, claimed_by = ${claimer}
             WHERE id IN (SELECT id FROM email_outbox WHERE state = 'pending' AND next_attempt_at <= ${now}
                           ORDER BY next_attempt_at, seq LIMIT ${limit}${SKIP_LOCKED})
             RETURNING *`,
      ),
    /** Gives back `claimer`'s claims (all, or those in `ids`), due at `now`. */
    release: (claimer: string, now: number, ids?: string[]) =>
      db.run(
        sql`UPDATE email_outbox SET next_attempt_at = ${now}, claimed_by = NULL
             WHERE claimed_by = ${claimer} AND state = 'pending'
               AND (CAST(${ids === undefined ? null : JSON.stringify(ids)} AS TEXT) IS NULL
                    OR id IN (${textsIn(db, ids ?? [])}))`,
      ),
    markSent: (id: string, now: number) =>
      db.run(
        sql`UPDATE email_outbox SET state = 'sent', attempts = attempts + 1, sent_at = ${now}, updated_at = ${now},
              claimed_by = NULL, last_error = NULL WHERE id = ${id} AND state = 'pending'`,
      ),
    /** A failed attempt: due again at `nextAt`, or given up (`failed`) when null. */
    markFailed: (id: string, error: string, nextAt: number | null, now: number) =>
      db.run(
        sql`UPDATE email_outbox SET state = ${nextAt === null ? "failed" : "pending"}, attempts = attempts + 1,
              next_attempt_at = ${nextAt ?? now}, last_error = ${error}, updated_at = ${now}, claimed_by = NULL
             WHERE id = ${id} AND state = 'pending'`,
      ),
    findById: (id: string) => db.get<OutboxRow>(sql`SELECT * FROM email_outbox WHERE id = ${id}`),
    /** Deletes up to `limit` emails sent or given up before `before`; how many it deleted. */
    purgeOlderThan: (before: number, limit: number) =>
      db.run(
        sql`DELETE FROM email_outbox WHERE seq IN (
              SELECT seq FROM email_outbox WHERE state IN ('sent', 'failed') AND updated_at < ${before}
               ORDER BY seq LIMIT ${limit})`,
      ),
    listForAccount: (accountId: string, limit: number) =>
      db.all<OutboxRow>(
        sql`SELECT * FROM email_outbox WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT ${limit}`,
      ),
    /** What /readyz and the settings page say of email. */
    async health() {
      const counts = await db.all<{ state: EmailState; n: number }>(
        sql`SELECT state, count(*) AS n FROM email_outbox WHERE state IN ('pending', 'failed') GROUP BY state`,
      );
      const byState = Object.fromEntries(counts.map((r) => [r.state, Number(r.n)]));
      const at = (await db.get<{ at: number | null }>(sql`SELECT max(sent_at) AS at FROM email_outbox`))?.at ?? null;
      const lastError = await db.get<{ at: number; error: string; recipient: string; state: EmailState }>(
        sql`SELECT updated_at AS at, last_error AS error, recipient, state FROM email_outbox
             WHERE last_error IS NOT NULL ORDER BY updated_at DESC LIMIT 1`,
      );
      return {
        lastSentAt: at === null ? null : Number(at),
        lastError,
        pending: byState.pending ?? 0,
        failed: byState.failed ?? 0,
      };
    },

    /** Customer emails are on unless the account turned them off. */
    customerEmails: async (accountId: string) =>
      ((
        await db.get<{ customer_emails: number }>(
          sql`SELECT customer_emails FROM email_account_settings WHERE account_id = ${accountId}`,
        )
      )?.customer_emails ?? 1) === 1,
    setCustomerEmails: (accountId: string, on: boolean, now: number) =>
      db.run(
        sql`INSERT INTO email_account_settings (account_id, customer_emails, updated_at)
            VALUES (${accountId}, ${on ? 1 : 0}, ${now})
            ON CONFLICT (account_id) DO UPDATE SET customer_emails = ${on ? 1 : 0}, updated_at = ${now}`,
      ),
    paymentNotices: async (userId: string): Promise<PaymentNotices> =>
      (
        await db.get<{ payments: PaymentNotices }>(
          sql`SELECT payments FROM email_user_settings WHERE user_id = ${userId}`,
        )
      )?.payments ?? "each",
    setPaymentNotices: (userId: string, notices: PaymentNotices, now: number) =>
      db.run(
        sql`INSERT INTO email_user_settings (user_id, payments, updated_at) VALUES (${userId}, ${notices}, ${now})
            ON CONFLICT (user_id) DO UPDATE SET payments = ${notices}, updated_at = ${now}`,
      ),
    /** The account's dashboard users with what each asked to be told of confirmed payments. */
    accountUsers: async (accountId: string) =>
      (
        await db.all<{ id: string; email: string; payments: PaymentNotices | null }>(
          sql`SELECT u.id, u.email, s.payments FROM dashboard_users u
                LEFT JOIN email_user_settings s ON s.user_id = u.id
               WHERE u.account_id = ${accountId} ORDER BY u.created_at, u.id`,
        )
      ).map((u) => ({ ...u, payments: u.payments ?? ("each" as PaymentNotices) })),
    allUsers: () =>
      db.all<{ id: string; email: string; account_id: string }>(
        sql`SELECT id, email, account_id FROM dashboard_users ORDER BY created_at, id`,
      ),
  };
}
