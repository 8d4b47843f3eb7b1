import { type TSchema, Type } from "@sinclair/typebox";
import { SPEEDS } from "../lib/speed.ts";
import { PAYMENT_STATUSES } from "../payments/store.ts";

/**
 * The payment as merchants and payers receive it (src/payments/view.ts and
 * src/checkout/public-view.ts), described for the OpenAPI document. The contract test checks
 * every real answer against these, so they cannot drift from what the server sends.
 */

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Timestamp = Type.String({ format: "date-time", description: "ISO 8601, UTC, millisecond precision." });
export const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "A 0x-prefixed EVM address." });
/** An id of ours with its prefix (`re_`, `we_`, `evt_`...): 24 base-62 characters after it. */
export const prefixed = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9A-Za-z]{24}$` });
export const TxHash = Type.String({ pattern: "^0x[0-9a-f]{64}$", description: "A transaction hash." });
export const PaymentId = Type.String({
  pattern: "^0x[0-9a-f]{64}$",
  description: "256 random bits: the only key to a payment's public pages, so unguessable.",
});
/** An amount in USDC with exactly two decimals, as requests give it: "25.00". */
export const Amount = Type.String({ pattern: "^[0-9]+\\.[0-9]{2}$", description: 'USDC, two decimals: "25.00".' });
/** An amount as it arrived on chain, to the micro-USDC: two decimals, more only when needed. */
export const ExactAmount = Type.String({
  pattern: "^-?[0-9]+\\.[0-9]{2,6}$",
  description: 'USDC, exact to the micro-USDC: "25.00", "25.000001".',
});
/** Metadata as the merchant sent it: up to 50 string values. */
export const Metadata = nullable(
  Type.Record(Type.String(), Type.String(), { description: "Your own key-value pairs, returned as sent." }),
);

/** One of `values`, as an enum (TypeBox writes a union of literals as anyOf, which reads worse). */
export const oneOf = <T extends string>(values: readonly T[], options: object = {}) =>
  Type.Unsafe<T>({ type: "string", enum: [...values], ...options });

export const PaymentStatus = oneOf(PAYMENT_STATUSES, {
  $id: "PaymentStatus",
  description: "What has happened to the payment (docs/statuses-and-settlement.md).",
});

export const Speed = oneOf(SPEEDS, {
  $id: "Speed",
  description:
    "A speed policy (docs/speed.md): how deep in the chain a transfer and the settlement must be before " +
    "they count. fast: in a block; standard: the chain's confirmations; final: at or below its final block.",
});

export const LineItem = Type.Object(
  { description: Type.String(), unit_amount: Amount, quantity: Type.Integer({ minimum: 1 }), amount: Amount },
  { $id: "LineItem", additionalProperties: false },
);

const BridgeState = oneOf(["credited", "burned", "attested", "minted", "settled"]);

export const Transfer = Type.Object(
  {
    chain: Type.String({ description: "The chain the transfer was made on." }),
    chain_id: Type.Integer(),
    tx_hash: TxHash,
    log_index: Type.Integer({ minimum: 0 }),
    amount: ExactAmount,
    block_number: Type.Integer({ minimum: 0 }),
    confirmed: Type.Boolean(),
    reversed: Type.Boolean({
      description: "A reorg took the transfer off the chain: kept for the record, its credit taken back.",
    }),
    bridge: nullable(
      Type.Object(
        {
          state: BridgeState,
          fee: nullable(ExactAmount),
          burn_tx_hash: nullable(TxHash),
          mint_tx_hash: nullable(TxHash),
        },
        {
          additionalProperties: false,
          description: "How funds sent on a source chain reach the settlement chain; null on the settlement chain.",
        },
      ),
    ),
  },
  { $id: "Transfer", additionalProperties: false },
);

export const CrossChainBurn = Type.Object(
  {
    id: Type.String({ pattern: "^burn_" }),
    chain: Type.String({ description: "The source chain the payer burned USDC on." }),
    tx_hash: TxHash,
    state: oneOf(["attesting", "redeeming", "redeemed", "failed"]),
    amount: nullable(ExactAmount),
    redeem_tx_hash: nullable(TxHash),
    error: nullable(Type.String({ description: "Why a failed burn failed; null otherwise." })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: "CrossChainBurn", additionalProperties: false },
);

export const Payment = Type.Object(
  {
    id: PaymentId,
    object: Type.Literal("payment"),
    status: PaymentStatus,
    amount: Amount,
    amount_received: nullable(ExactAmount),
    amount_refunded: Type.String({
      pattern: "^[0-9]+\\.[0-9]{2,6}$",
      description:
        "What succeeded refunds paid back, exact to the micro-USDC (docs/refunds.md). The payment's status " +
        "never changes with its refunds.",
    }),
    currency: Type.Literal("USDC"),
    pay_url: Type.String({ format: "uri", description: "The hosted checkout page." }),
    x402_url: Type.String({
      format: "uri",
      description:
        "Where a program pays it over x402 (v2, scheme exact): answers 402 with PAYMENT-REQUIRED for the amount due.",
    }),
    deposit_address: Address,
    fee_bps: Type.Integer({ minimum: 0, maximum: 10_000 }),
    bridge_fee: ExactAmount,
    // The policy in effect for it, fixed at creation: the request's, else the account's, else the server's.
    speed: Speed,
    chain: Type.String({ description: "The settlement chain." }),
    chain_id: Type.Integer(),
    token_address: Address,
    description: nullable(Type.String()),
    reference: nullable(Type.String()),
    success_url: nullable(Type.String()),
    customer_email: nullable(Type.String()),
    customer_name: nullable(Type.String()),
    invoice_number: nullable(Type.String()),
    due_at: nullable(Timestamp),
    line_items: nullable(Type.Array(LineItem)),
    payment_link: nullable(Type.String({ description: "The payment link it was created through." })),
    transfers: Type.Array(Transfer),
    cross_chain_transfers: Type.Array(CrossChainBurn),
    expires_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
    metadata: Metadata,
  },
  { $id: "Payment", additionalProperties: false },
);

const IncomingTransfer = Type.Object(
  {
    chain: Type.String(),
    chain_id: Type.Integer(),
    tx_hash: TxHash,
    amount: ExactAmount,
    confirmations: Type.Integer({ minimum: 0 }),
    confirmed: Type.Boolean(),
    bridge: nullable(
      Type.Object(
        { state: BridgeState, burn_tx_hash: nullable(TxHash), mint_tx_hash: nullable(TxHash) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Network = Type.Object(
  {
    chain: Type.String(),
    chain_id: Type.Integer(),
    token_address: Address,
    payment_uri: Type.String({ description: "An EIP-681 request for the amount due on this network." }),
    explorer: nullable(Type.String({ format: "uri" })),
  },
  { additionalProperties: false },
);

/** A gasless authorization as the payer's page sees it (docs/gasless.md). */
export const PublicAuthorization = Type.Object(
  {
    id: Type.String({ pattern: "^auth_[0-9A-Za-z]{24}$" }),
    status: Type.Union(
      [Type.Literal("pending"), Type.Literal("submitted"), Type.Literal("succeeded"), Type.Literal("failed")],
      {
        description:
          "`succeeded`: the transfer was mined, by the relayer or by anyone who sent the same authorization.",
      },
    ),
    tx_hash: nullable(TxHash),
    error: nullable(Type.String({ description: "Why it failed, in words for the payer." })),
  },
  { $id: "PublicAuthorization", additionalProperties: false },
);

/** What the checkout page and the widget see: nothing private (no metadata, fee, email or payout). */
export const PublicPayment = Type.Object(
  {
    id: PaymentId,
    status: PaymentStatus,
    amount: Amount,
    amount_received: nullable(ExactAmount),
    amount_due: ExactAmount,
    currency: Type.Literal("USDC"),
    deposit_address: Address,
    chain: Type.String(),
    chain_id: Type.Integer(),
    token_address: Address,
    expires_at: Timestamp,
    created_at: Timestamp,
    description: nullable(Type.String()),
    reference: nullable(Type.String()),
    line_items: nullable(Type.Array(LineItem)),
    invoice_number: nullable(Type.String()),
    due_at: nullable(Timestamp),
    customer_name: nullable(Type.String()),
    success_url: nullable(Type.String({ description: "Set once the payment is confirmed." })),
    payment_uri: Type.String(),
    x402_url: Type.String({
      format: "uri",
      description: "Where a program pays it over x402 (docs/agents-and-programs.md).",
    }),
    merchant_name: Type.String(),
    incoming_transfers: Type.Array(IncomingTransfer),
    cross_chain_transfers: Type.Array(CrossChainBurn),
    networks: Type.Array(Network, { description: "Where the payer may send USDC, the settlement chain first." }),
    authorizations: Type.Array(PublicAuthorization, {
      description: "Payments by signature (pay without gas) posted for this payment, oldest first.",
    }),
  },
  { $id: "PublicPayment", additionalProperties: false },
);
