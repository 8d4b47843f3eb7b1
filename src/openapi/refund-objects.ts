import { Type } from "@sinclair/typebox";
import { REFUND_STATUSES } from "../refunds/store.ts";
import { Address, Metadata, nullable, oneOf, PaymentId, prefixed, Timestamp, TxHash } from "./payment-objects.ts";

/**
 * The refund as the API and webhooks return it (src/refunds/view.ts), described for the OpenAPI
 * document; the contract test holds every real answer to it.
 */

/** A refund's amount: exact to the micro-USDC, never negative. */
const RefundAmount = Type.String({
  pattern: "^[0-9]+\\.[0-9]{2,6}$",
  description: 'USDC, exact to the micro-USDC: "12.50", "0.000001".',
});

export const RefundStatus = oneOf(REFUND_STATUSES, {
  $id: "RefundStatus",
  description:
    "awaiting_address: the payer has the claim link and has not named an address yet; awaiting_payment: " +
    "the address is known and the merchant's transfer is awaited; succeeded: the transfer counts under the " +
    "payment's speed policy; canceled: canceled before any transfer paying it was seen (docs/refunds.md).",
});

export const PaymentInstructions = Type.Object(
  {
    chain: Type.String({ description: "The settlement chain, where the refund is paid." }),
    chain_id: Type.Integer(),
    token: Address,
    to: Address,
    amount: RefundAmount,
    data: Type.String({
      pattern: "^0x[0-9a-f]+$",
      description: "The ERC-20 `transfer(to, amount)` calldata to send to `token` from any wallet or script.",
    }),
    uri: Type.String({ description: "The same transfer as an EIP-681 request, for a wallet's QR scanner." }),
  },
  {
    $id: "PaymentInstructions",
    additionalProperties: false,
    description: "The exact transfer that pays the refund: this token, to this address, for exactly this amount.",
  },
);

export const Refund = Type.Object(
  {
    id: prefixed("re"),
    object: Type.Literal("refund"),
    payment: PaymentId,
    amount: RefundAmount,
    currency: Type.Literal("USDC"),
    status: RefundStatus,
    reason: nullable(Type.String({ description: "The merchant's private note; never shown to the payer." })),
    claim_url: Type.String({
      format: "uri",
      description:
        "The payer's link to name the address the refund goes to. Whoever holds it can name the address: " +
        "send it to the payer alone.",
    }),
    refund_address: nullable(Address),
    payment_instructions: nullable(PaymentInstructions),
    tx_hash: nullable(
      Type.String({
        pattern: TxHash.pattern,
        description: "The transfer that pays the refund, as soon as the watcher sees it (before it counts).",
      }),
    ),
    block_number: nullable(Type.Integer({ minimum: 0 })),
    created_at: Timestamp,
    updated_at: Timestamp,
    payable_at: nullable(Timestamp),
    succeeded_at: nullable(Timestamp),
    canceled_at: nullable(Timestamp),
    metadata: Metadata,
  },
  { $id: "Refund", additionalProperties: false },
);
