/**
 * The INSERT of a new payment, one statement per engine (src/payments/store.ts picks one). Both
 * name the same columns; they stay two written-out constant texts, each joined once and prepared
 * once, rather than one built from shared fragments on the server's hottest path.
 */
import { sql } from "../db/engine.ts";
import type { Speed } from "../lib/speed.ts";
import type { NewPaymentRow } from "./store.ts";

/**
 * What a payment asked for with an API key was built from: the key, and its account's terms as
 * that key's read gave them (the account's own fee and speed, null where the server's apply).
 */
export interface KeyTerms {
  keyId: string;
  payoutAddress: string;
  feeBps: number | null;
  speed: Speed | null;
}

// SQLite's. Written out in full, the hottest statement of the server is a constant text: prepared once.
export const plainInsert = (row: NewPaymentRow) =>
  sql`INSERT INTO payments (
        id, account_id, status, amount, amount_received, fee_bps, fee_recipient, payout_address, chain_id,
        token_address, deposit_address, description, reference, success_url, customer_email, customer_name,
        invoice_number, due_at, metadata, line_items, payment_link, factory_version, settlement_domain,
        token_messenger, max_bridge_fee_bps, fast_domains, speed, expires_at, created_at, updated_at)
      VALUES (
        ${row.id}, ${row.account_id}, ${row.status}, ${row.amount}, ${row.amount_received}, ${row.fee_bps},
        ${row.fee_recipient}, ${row.payout_address}, ${row.chain_id}, ${row.token_address},
        ${row.deposit_address}, ${row.description}, ${row.reference}, ${row.success_url},
        ${row.customer_email}, ${row.customer_name}, ${row.invoice_number}, ${row.due_at}, ${row.metadata},
        ${row.line_items}, ${row.payment_link}, ${row.factory_version}, ${row.settlement_domain},
        ${row.token_messenger}, ${row.max_bridge_fee_bps}, ${row.fast_domains}, ${row.speed},
        ${row.expires_at}, ${row.created_at}, ${row.updated_at})
      RETURNING seq`;

/** plainInsert on PostgreSQL, which stores nothing unless `terms` (none: no key) still hold. */
export const conditionalInsert = (row: NewPaymentRow, terms: KeyTerms | null) =>
  sql`INSERT INTO payments (
        id, account_id, status, amount, amount_received, fee_bps, fee_recipient, payout_address, chain_id,
        token_address, deposit_address, description, reference, success_url, customer_email, customer_name,
        invoice_number, due_at, metadata, line_items, payment_link, factory_version, settlement_domain,
        token_messenger, max_bridge_fee_bps, fast_domains, speed, expires_at, created_at, updated_at)
      SELECT
        ${row.id}, ${row.account_id}, ${row.status}, ${row.amount}, ${row.amount_received}, ${row.fee_bps},
        ${row.fee_recipient}, ${row.payout_address}, ${row.chain_id}, ${row.token_address},
        ${row.deposit_address}, ${row.description}, ${row.reference}, ${row.success_url},
        ${row.customer_email}, ${row.customer_name}, ${row.invoice_number}, ${row.due_at}, ${row.metadata},
        ${row.line_items}, ${row.payment_link}, ${row.factory_version}, ${row.settlement_domain},
        ${row.token_messenger}, ${row.max_bridge_fee_bps}, ${row.fast_domains}, ${row.speed},
        ${row.expires_at}, ${row.created_at}, ${row.updated_at}
       WHERE CAST(${terms?.keyId ?? null} AS TEXT) IS NULL
          OR EXISTS (SELECT 1 FROM api_keys k JOIN accounts a ON a.id = k.account_id
                      WHERE k.id = ${terms?.keyId ?? null} AND k.revoked_at IS NULL AND a.id = ${row.account_id}
                        AND a.payout_address = ${terms?.payoutAddress ?? null}
                        AND a.fee_bps IS NOT DISTINCT FROM ${terms?.feeBps ?? null}
                        AND a.speed IS NOT DISTINCT FROM ${terms?.speed ?? null})
      RETURNING seq`;
