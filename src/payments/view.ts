import { isoMillis } from "../lib/clock.ts";
import { formatAmount, formatExact } from "../lib/money.ts";
import type { PaymentRow } from "./store.ts";

/** What a payment's JSON needs beyond its row: deployment facts and its credited transfers. */
export interface ViewContext {
  baseUrl: string;
  /** The settlement chain's name. */
  chainName: string;
  /** Names of the enabled source chains by chain id, for transfers made on them. */
  sourceChainNames?: ReadonlyMap<number, string>;
}

export interface TransferView {
  /** The chain the transfer was made on. */
  chain: string;
  chain_id: number;
  tx_hash: string;
  log_index: number;
  amount: string;
  block_number: number;
  confirmed: boolean;
  /** A reorg took it off the chain: kept for the record, never counted (docs/speed.md). */
  reversed: boolean;
  /** How a credited transfer on a source chain reaches the settlement chain; null on the settlement chain. */
  bridge: BridgeView | null;
}

/** A bridged transfer's journey: credited, burned, attested, minted, settled (docs/any-chain-in.md). */
export interface BridgeView {
  state: string;
  /** The CCTP fee its burn paid, once attested (exact decimal). */
  fee: string | null;
  burn_tx_hash: string | null;
  mint_tx_hash: string | null;
}

export interface StoredLineItem {
  description: string;
  unit_amount: string; // micro-USDC, decimal string
  quantity: number;
}

/** Stored line items as requests and pages show them; payment links store theirs the same way. */
export function lineItemsView(row: { line_items: string | null }) {
  if (!row.line_items) return null;
  return (JSON.parse(row.line_items) as StoredLineItem[]).map((item) => ({
    description: item.description,
    unit_amount: formatAmount(BigInt(item.unit_amount)),
    quantity: item.quantity,
    amount: formatAmount(BigInt(item.unit_amount) * BigInt(item.quantity)),
  }));
}

/** The name of the chain a transfer was made on: a source chain's, else the settlement chain's. */
export function chainNameOf(chainId: number, ctx: ViewContext): string {
  return ctx.sourceChainNames?.get(chainId) ?? ctx.chainName;
}

/** Where a program pays the payment over x402 (src/x402/routes.ts). */
export const x402Url = (id: string, ctx: ViewContext): string => `${ctx.baseUrl}/api/public/payments/${id}/x402`;

/** What is still to pay, never negative. */
export function amountDue(row: PaymentRow): bigint {
  const due = row.amount - (row.amount_received ?? 0n);
  return due > 0n ? due : 0n;
}

/**
 * The merchant's payment object, as create, retrieve, list and webhooks return it. Built as a
 * string because `metadata` is spliced in as the exact text the merchant sent.
 */
export function merchantPaymentJson(
  row: PaymentRow,
  transfers: TransferView[],
  crossChain: unknown[],
  ctx: ViewContext,
): string {
  const view = {
    id: row.id,
    object: "payment",
    status: row.status,
    amount: formatAmount(row.amount),
    amount_received: row.amount_received === null ? null : formatExact(row.amount_received),
    amount_refunded: formatExact(row.amount_refunded),
    currency: "USDC",
    pay_url: `${ctx.baseUrl}/pay/${row.id}`,
    x402_url: x402Url(row.id, ctx),
    deposit_address: row.deposit_address,
    fee_bps: row.fee_bps,
    bridge_fee: formatExact(row.bridge_fee),
    speed: row.speed,
    chain: ctx.chainName,
    chain_id: row.chain_id,
    token_address: row.token_address,
    description: row.description,
    reference: row.reference,
    success_url: row.success_url,
    customer_email: row.customer_email,
    customer_name: row.customer_name,
    invoice_number: row.invoice_number,
    due_at: isoMillis(row.due_at),
    line_items: lineItemsView(row),
    payment_link: row.payment_link,
    transfers,
    cross_chain_transfers: crossChain,
    expires_at: isoMillis(row.expires_at),
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
  const json = JSON.stringify(view);
  return `${json.slice(0, -1)},"metadata":${row.metadata ?? "null"}}`;
}
