import { type Address, encodeFunctionData, erc20Abi } from "viem";
import { isoMillis } from "../lib/clock.ts";
import { formatExact } from "../lib/money.ts";
import type { RefundRow } from "./store.ts";

/** What a refund's JSON needs beyond its row. */
export interface RefundViewContext {
  baseUrl: string;
  /** The settlement chain, where refunds are paid. */
  chainName: string;
  usdc: Address;
  /** The claim link's token for a refund id (src/refunds/claim-token.ts). */
  claimToken: (refundId: string) => string;
}

/** The exact transfer that pays a refund: USDC `transfer(to, amount)` on the settlement chain. */
export interface PaymentInstructions {
  chain: string;
  chain_id: number;
  token: string;
  to: string;
  /** Exact decimal USDC. */
  amount: string;
  /** The calldata to send to `token`. */
  data: string;
  /** EIP-681, for wallets that read it (a QR code). */
  uri: string;
}

export function paymentInstructions(row: RefundRow, ctx: RefundViewContext): PaymentInstructions | null {
  if (row.refund_address === null || row.status === "canceled") return null;
  const to = row.refund_address as Address;
  return {
    chain: ctx.chainName,
    chain_id: row.chain_id,
    token: ctx.usdc,
    to,
    amount: formatExact(row.amount),
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, row.amount] }),
    uri: `ethereum:${ctx.usdc}@${row.chain_id}/transfer?address=${to}&uint256=${row.amount}`,
  };
}

export const claimUrl = (row: Pick<RefundRow, "id">, ctx: RefundViewContext) =>
  `${ctx.baseUrl}/refund/${ctx.claimToken(row.id)}`;

/**
 * The merchant's refund object, as the API and webhooks return it. Built as a string because
 * `metadata` is spliced in as the exact text the merchant sent (as payments do).
 */
export function refundJson(row: RefundRow, ctx: RefundViewContext): string {
  const view = {
    id: row.id,
    object: "refund",
    payment: row.payment_id,
    amount: formatExact(row.amount),
    currency: "USDC",
    status: row.status,
    reason: row.reason,
    claim_url: claimUrl(row, ctx),
    refund_address: row.refund_address,
    payment_instructions: paymentInstructions(row, ctx),
    tx_hash: row.tx_hash,
    block_number: row.block_number,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
    payable_at: isoMillis(row.payable_at),
    succeeded_at: isoMillis(row.succeeded_at),
    canceled_at: isoMillis(row.canceled_at),
  };
  const json = JSON.stringify(view);
  return `${json.slice(0, -1)},"metadata":${row.metadata ?? "null"}}`;
}
