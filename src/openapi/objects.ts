import { type TSchema, Type } from "@sinclair/typebox";
import { EVENT_TYPES } from "../events/service.ts";
import {
  Address,
  Amount,
  LineItem,
  Metadata,
  nullable,
  oneOf,
  Payment,
  PaymentId,
  prefixed,
  Speed,
  Timestamp,
  TxHash,
} from "./payment-objects.ts";
import { Refund } from "./refund-objects.ts";

/**
 * Every other object the API answers with (payment links, webhook endpoints and deliveries,
 * events, recoveries, errors, lists), as the document describes them. The views they mirror are
 * named on each; the contract test holds the two together.
 */

/** `{"error": "..."}`: every refusal, with a message that names the field and the rule. */
export const ErrorBody = Type.Object(
  { error: Type.String({ description: "What was wrong, for a person to read; never a stack trace." }) },
  { $id: "Error", additionalProperties: false },
);

/** A page of `item`s (Stripe's list envelope); `starting_after` the last id fetches the next. */
export const listOf = (item: TSchema, id: string) =>
  Type.Object(
    {
      object: Type.Literal("list"),
      data: Type.Array(item),
      has_more: Type.Boolean({ description: "Whether a next page exists." }),
    },
    { $id: id, additionalProperties: false },
  );

/** src/payment-links/view.ts */
export const PaymentLink = Type.Object(
  {
    id: prefixed("plink"),
    object: Type.Literal("payment_link"),
    url: Type.String({ format: "uri", description: "Where a payer opens the link." }),
    active: Type.Boolean(),
    amount: nullable(Amount),
    min_amount: nullable(Amount),
    max_amount: nullable(Amount),
    currency: Type.Literal("USDC"),
    description: nullable(Type.String()),
    line_items: nullable(Type.Array(LineItem)),
    success_url: nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    metadata: Metadata,
  },
  { $id: "PaymentLink", additionalProperties: false },
);

const endpointFields = {
  id: prefixed("we"),
  object: Type.Literal("webhook_endpoint"),
  url: Type.String({ format: "uri" }),
  status: oneOf(["enabled", "disabled"], { description: "Disabled after the receiver answered 410 Gone." }),
  created_at: Timestamp,
};

/** src/webhooks/endpoints.ts */
export const WebhookEndpoint = Type.Object(endpointFields, { $id: "WebhookEndpoint", additionalProperties: false });

export const CreatedWebhookEndpoint = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({ pattern: "^whsec_", description: "The signing secret: in this answer only." }),
  },
  { $id: "CreatedWebhookEndpoint", additionalProperties: false },
);

export const DeletedWebhookEndpoint = Type.Object(
  { id: prefixed("we"), object: Type.Literal("webhook_endpoint"), deleted: Type.Literal(true) },
  { $id: "DeletedWebhookEndpoint", additionalProperties: false },
);

/** src/webhooks/deliveries.ts */
export const Delivery = Type.Object(
  {
    id: prefixed("whd"),
    object: Type.Literal("webhook_delivery"),
    endpoint_id: prefixed("we"),
    event_id: prefixed("evt"),
    event_type: Type.String(),
    payment_id: nullable(PaymentId),
    status: oneOf(["pending", "succeeded", "failed", "canceled"]),
    attempt_count: Type.Integer({ minimum: 0 }),
    next_attempt_at: nullable(Timestamp),
    created_at: Timestamp,
    attempts: Type.Array(
      Type.Object(
        {
          attempted_at: Timestamp,
          response_status: nullable(Type.Integer()),
          error: nullable(Type.String()),
          duration_ms: nullable(Type.Integer({ minimum: 0 })),
          next_retry_at: nullable(Timestamp),
        },
        { additionalProperties: false },
      ),
      { description: "Newest first." },
    ),
  },
  { $id: "Delivery", additionalProperties: false },
);

export const TestSend = Type.Object(
  { event_id: prefixed("evt"), delivery: Delivery },
  { $id: "TestSend", additionalProperties: false },
);

const eventOf = (types: readonly string[], data: TSchema, id: string) =>
  Type.Object(
    {
      id: prefixed("evt"),
      object: Type.Literal("event"),
      type: oneOf(types),
      created_at: Timestamp,
      data,
    },
    { $id: id, additionalProperties: false },
  );

const PAYMENT_EVENTS = EVENT_TYPES.filter((type) => type.startsWith("payment."));

export const PaymentEvent = eventOf(
  PAYMENT_EVENTS,
  Type.Object({ payment: Payment }, { additionalProperties: false }),
  "PaymentEvent",
);

const Account = Type.Object(
  {
    id: prefixed("acct"),
    name: Type.String(),
    payout_address: nullable(Address),
    // null: the account has no fee of its own and STABLEGATE_FEE_BPS applies (docs/accounts.md).
    fee_bps: nullable(Type.Integer({ minimum: 0, maximum: 10_000 })),
    speed: Speed,
    speed_source: oneOf(["account", "server"], {
      description: "account: the account's own speed policy; server: it follows the server's STABLEGATE_SPEED.",
    }),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AccountEvent = eventOf(
  ["account.updated"],
  Type.Object(
    {
      account: Account,
      previous_attributes: Type.Object({ payout_address: nullable(Address) }, { additionalProperties: false }),
    },
    { additionalProperties: false },
  ),
  "AccountEvent",
);

export const TestEvent = eventOf(
  ["test"],
  Type.Object({ message: Type.String() }, { additionalProperties: false }),
  "TestEvent",
);

const REFUND_EVENTS = EVENT_TYPES.filter((type) => type.startsWith("refund."));

export const RefundEvent = eventOf(
  REFUND_EVENTS,
  Type.Object({ refund: Refund }, { additionalProperties: false }),
  "RefundEvent",
);

/** An event as the events API returns it and webhooks send it, told apart by `type`. */
export const Event = Type.Union([PaymentEvent, RefundEvent, AccountEvent, TestEvent], { $id: "Event" });

/** src/chain/recovering/view.ts */
export const Recovery = Type.Object(
  {
    id: prefixed("rcv"),
    object: Type.Literal("recovery"),
    payment: PaymentId,
    chain: Type.String(),
    chain_id: Type.Integer(),
    token: nullable(Type.String({ description: "The ERC-20's address; null for the chain's native coin." })),
    state: oneOf(["pending", "submitted", "succeeded", "failed"]),
    amount_units: nullable(Type.String({ pattern: "^[0-9]+$", description: "In the token's smallest units." })),
    decimals: nullable(Type.Integer({ minimum: 0 })),
    payout_address: Address,
    tx_hash: nullable(TxHash),
    error: nullable(Type.String({ description: "Why a failed recovery failed; null otherwise." })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: "Recovery", additionalProperties: false },
);
