import { Type } from "@sinclair/typebox";
import { Address, ExactAmount, nullable, PublicAuthorization, PublicPayment } from "./payment-objects.ts";

/**
 * What the cross-chain endpoints of the checkout (src/chain/redeeming/service.ts) and the health
 * endpoints (src/ops/routes.ts) answer, described for the OpenAPI document.
 */

export const CrossChainSources = Type.Object(
  {
    object: Type.Literal("list"),
    data: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          chain_id: Type.Integer(),
          domain: Type.Integer({ minimum: 0, description: "Circle's CCTP domain." }),
          fast_seconds: nullable(Type.Integer({ minimum: 0 })),
          standard_seconds: nullable(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: "CrossChainSources", additionalProperties: false },
);

const WalletCall = Type.Object(
  {
    to: Address,
    data: Type.String({ pattern: "^0x[0-9a-f]*$" }),
    value: Type.String({ pattern: "^[0-9]+$" }),
    description: Type.String(),
  },
  { additionalProperties: false },
);

const BurnOption = Type.Union([
  Type.Object({ available: Type.Literal(false) }, { additionalProperties: false }),
  Type.Object(
    {
      available: Type.Literal(true),
      fee_bps: Type.Number({ minimum: 0 }),
      burn_amount: ExactAmount,
      max_fee: ExactAmount,
      min_finality_threshold: Type.Integer(),
      estimated_seconds: Type.Integer({ minimum: 0 }),
      calls: Type.Array(WalletCall, { description: "The wallet calls to make on the source chain, in order." }),
    },
    { additionalProperties: false },
  ),
]);

const quoteBase = {
  chain: Type.String(),
  chain_id: Type.Integer(),
  domain: Type.Integer({ minimum: 0 }),
  destination_domain: Type.Integer({ minimum: 0 }),
  amount_due: ExactAmount,
};

export const CrossChainQuote = Type.Union(
  [
    Type.Object({ ...quoteBase, needed: Type.Literal(false), message: Type.String() }, { additionalProperties: false }),
    Type.Object(
      { ...quoteBase, needed: Type.Literal(true), fast: BurnOption, standard: BurnOption },
      { additionalProperties: false },
    ),
  ],
  { $id: "CrossChainQuote", description: "How to pay what is due by burning USDC on a source chain." },
);

const Uint = Type.String({ pattern: "^[0-9]+$" });
const TypedField = Type.Object({ name: Type.String(), type: Type.String() }, { additionalProperties: false });

/** What "pay without gas" offers to sign for a payment: EIP-3009 typed data for eth_signTypedData_v4. */
export const GaslessOffer = Type.Object(
  {
    available: Type.Boolean(),
    reason: nullable(Type.String({ description: "Why not, in words for the payer, when not available." })),
    chain: Type.String(),
    chain_id: Type.Integer(),
    floor: nullable(ExactAmount),
    typed_data: nullable(
      Type.Object(
        {
          domain: Type.Object(
            { name: Type.String(), version: Type.String(), chainId: Type.Integer(), verifyingContract: Address },
            { additionalProperties: false, description: "Read from the token itself (name(), version())." },
          ),
          types: Type.Object(
            { EIP712Domain: Type.Array(TypedField), TransferWithAuthorization: Type.Array(TypedField) },
            { additionalProperties: false },
          ),
          primaryType: Type.Literal("TransferWithAuthorization"),
          message: Type.Object(
            { to: Address, value: Uint, validAfter: Uint, validBefore: Uint },
            {
              additionalProperties: false,
              description:
                "The wallet adds `from` and a random 32-byte `nonce`; value in micro-USDC, times in unix seconds.",
            },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: "GaslessOffer", additionalProperties: false },
);

export const GaslessAccepted = Type.Object(
  { authorization: PublicAuthorization, payment: PublicPayment },
  { $id: "GaslessAccepted", additionalProperties: false },
);

export const Health = Type.Object({ ok: Type.Literal(true) }, { $id: "Health", additionalProperties: false });

/** This very document, described by its top level only: the OpenAPI specification describes the rest. */
export const OpenApiDocument = Type.Object(
  {
    openapi: Type.String({ pattern: "^3\\.1\\.\\d+$" }),
    info: Type.Object({ title: Type.String(), version: Type.String() }),
    paths: Type.Object({}),
    webhooks: Type.Object({}),
    components: Type.Object({}),
  },
  { description: "An OpenAPI 3.1 document." },
);

/**
 * Readiness: `status` for anyone; the rest, for operators, only with the metrics token. The
 * details are listed loosely, as they grow with the deployment (source chains, bridging).
 */
export const Readiness = Type.Object(
  {
    status: Type.Union([Type.Literal("ready"), Type.Literal("not_ready")], {
      description:
        "`ready` (200) or `not_ready` (503, the store cannot be reached). All a caller without the token sees.",
    }),
    ok: Type.Optional(Type.Boolean({ description: "With the metrics token: the same as `status`, as a boolean." })),
    store: Type.Optional(Type.Union([Type.Literal("ok"), Type.Literal("unavailable")])),
    chain: Type.Optional(
      Type.Object(
        { ok: Type.Boolean() },
        { additionalProperties: true, description: "With the metrics token: the settlement chain's loops." },
      ),
    ),
    chains: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Type.String(), chain_id: Type.Integer(), role: Type.String(), ok: Type.Boolean() },
          { additionalProperties: true },
        ),
        { description: "With the metrics token: every watched chain, the settlement chain first." },
      ),
    ),
    leases: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ description: "`chain`: the watchers, settlements, bridging and redemptions." }),
            held: Type.Boolean({ description: "Whether this replica holds it." }),
            token: Type.Union([Type.Integer(), Type.Null()], { description: "The fencing token of its term." }),
            terms: Type.Integer({ description: "Terms this replica has held it since it started." }),
          },
          { description: "Work one replica at a time does, and whether this replica does it." },
        ),
        { description: "With the metrics token: the leases and whether this replica holds them." },
      ),
    ),
  },
  { $id: "Readiness", additionalProperties: true },
);
