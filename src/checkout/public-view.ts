import type { PublicAuthorizationView } from "../chain/authorizations/view.ts";
import { isoMillis } from "../lib/clock.ts";
import { formatAmount, formatExact } from "../lib/money.ts";
import type { PaymentRow } from "../payments/store.ts";
import { amountDue, lineItemsView, type ViewContext, x402Url } from "../payments/view.ts";
import { type Networks, networksView, paymentUri } from "./networks.ts";

/** Transfers the chain watcher has seen; unconfirmed ones let the page say "waiting for confirmations". */
export interface IncomingTransfer {
  /** The chain it was made on, and its confirmations counted there. */
  chain: string;
  chain_id: number;
  tx_hash: string;
  amount: string;
  confirmations: number;
  confirmed: boolean;
  /** Credited on a source chain: how far its funds are on their way (its fee is the merchant's business). */
  bridge: { state: string; burn_tx_hash: string | null; mint_tx_hash: string | null } | null;
}

export interface PublicExtras {
  merchantName: string;
  incoming: IncomingTransfer[];
  crossChain: unknown[];
  /** Where the payer may send USDC, the settlement chain first (networksOf). */
  networks: Networks;
  /** The payment's gasless authorizations (docs/gasless.md): status, transaction and what went wrong, in words. */
  authorizations: PublicAuthorizationView[];
}

/**
 * What the checkout renders from: only what a payer may see. Never metadata, fee, payout or
 * account data, customer email, or anything about keys.
 */
export function publicPaymentView(row: PaymentRow, extras: PublicExtras, ctx: ViewContext) {
  return {
    id: row.id,
    status: row.status,
    amount: formatAmount(row.amount),
    amount_received: row.amount_received === null ? null : formatExact(row.amount_received),
    amount_due: formatExact(amountDue(row)),
    currency: "USDC",
    deposit_address: row.deposit_address,
    chain: ctx.chainName,
    chain_id: row.chain_id,
    token_address: row.token_address,
    expires_at: isoMillis(row.expires_at),
    created_at: isoMillis(row.created_at),
    description: row.description,
    reference: row.reference,
    line_items: lineItemsView(row),
    invoice_number: row.invoice_number,
    due_at: isoMillis(row.due_at),
    customer_name: row.customer_name,
    success_url: row.status === "confirmed" ? row.success_url : null,
    payment_uri: paymentUri(row, extras.networks[0]),
    x402_url: x402Url(row.id, ctx),
    merchant_name: extras.merchantName,
    incoming_transfers: extras.incoming,
    cross_chain_transfers: extras.crossChain,
    networks: networksView(row, extras.networks),
    authorizations: extras.authorizations,
  };
}

export type PublicPaymentView = ReturnType<typeof publicPaymentView>;
