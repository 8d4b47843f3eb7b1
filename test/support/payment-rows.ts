/**
 * Payments written straight into a real SQLite file, for tests of the stores and services that
 * read them (lists, searches, home figures, the export) without going through the API.
 */
import { randomBytes } from "node:crypto";
import { getAddress } from "viem";
import { createAccountStore } from "../../src/accounts/store.ts";
import type { Db } from "../../src/db/index.ts";
import { createPaymentStore, type NewPaymentRow, type PaymentStore } from "../../src/payments/store.ts";
import { TEST_PAYOUT, TEST_USDC } from "./server.ts";

const hex = (bytes: number) => `0x${randomBytes(bytes).toString("hex")}`;

/** An account row, so payments have an owner. */
export async function insertAccount(db: Db, id: string, feeBps: number | null = null): Promise<string> {
  await createAccountStore(db).insertAccount({
    id,
    name: id,
    payout_address: TEST_PAYOUT,
    fee_bps: feeBps,
    created_at: 0,
  });
  return id;
}

/** A pending 25.00 USDC payment created at `created_at`, with whatever `fields` say instead. */
export function paymentRow(accountId: string, createdAt: number, fields: Partial<NewPaymentRow> = {}): NewPaymentRow {
  return {
    id: hex(32),
    account_id: accountId,
    status: "pending",
    amount: 25_000_000n,
    amount_received: null,
    fee_bps: 0,
    fee_recipient: "0x0000000000000000000000000000000000000000",
    payout_address: TEST_PAYOUT,
    chain_id: 31337,
    token_address: TEST_USDC,
    deposit_address: getAddress(hex(20)), // stored checksummed, as payment creation stores it
    description: null,
    reference: null,
    success_url: null,
    customer_email: null,
    customer_name: null,
    invoice_number: null,
    due_at: null,
    metadata: null,
    line_items: null,
    payment_link: null,
    factory_version: 1,
    settlement_domain: null,
    token_messenger: null,
    max_bridge_fee_bps: null,
    fast_domains: null,
    speed: "standard",
    expires_at: createdAt + 3_600_000,
    created_at: createdAt,
    updated_at: createdAt,
    ...fields,
  };
}

/** Inserts `row` and returns it. */
export async function insertPayment(store: PaymentStore, row: NewPaymentRow): Promise<NewPaymentRow> {
  await store.insert(row);
  return row;
}

export { createPaymentStore };

/** Late funds bounded by nothing: store tests that are not about the sweep floor or its daily limit. */
export const ANY_LATE_FUNDS = { floor: 0n, perDay: Number.MAX_SAFE_INTEGER } as const;
