import { Type } from "@sinclair/typebox";
import { PublicPaymentParams } from "../checkout/public-routes.ts";
import { FacilitatorRequestSchema, PaymentRequirementsSchema, ResourceInfoSchema } from "../x402/protocol.ts";
import type { Operation } from "./operation.ts";
import { PublicPayment } from "./payment-objects.ts";

/** x402 v2's PaymentRequired, also base64 in the PAYMENT-REQUIRED header. */
export const X402PaymentRequired = Type.Object(
  {
    x402Version: Type.Literal(2),
    error: Type.Optional(Type.String()),
    resource: ResourceInfoSchema,
    accepts: Type.Array(PaymentRequirementsSchema),
    extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: "X402PaymentRequired" },
);

export const X402VerifyResponse = Type.Object(
  {
    isValid: Type.Boolean(),
    invalidReason: Type.Optional(Type.String()),
    invalidMessage: Type.Optional(Type.String({ description: "The reason in words." })),
    payer: Type.Optional(Type.String()),
  },
  { $id: "X402VerifyResponse", additionalProperties: false },
);

export const X402SettleResponse = Type.Object(
  {
    success: Type.Boolean(),
    errorReason: Type.Optional(Type.String()),
    errorMessage: Type.Optional(Type.String({ description: "The reason in words." })),
    payer: Type.Optional(Type.String()),
    transaction: Type.String({ description: "The transaction hash; empty when nothing was sent." }),
    network: Type.String({ description: "CAIP-2, eip155:<chain id>." }),
    amount: Type.Optional(Type.String()),
  },
  { $id: "X402SettleResponse", additionalProperties: false },
);

export const X402Supported = Type.Object(
  {
    kinds: Type.Array(
      Type.Object(
        { x402Version: Type.Literal(2), scheme: Type.Literal("exact"), network: Type.String() },
        { additionalProperties: false },
      ),
    ),
    extensions: Type.Array(Type.String()),
    signers: Type.Record(Type.String(), Type.Array(Type.String())),
  },
  { $id: "X402Supported", additionalProperties: false },
);

const SIGNATURE_HEADER = {
  name: "PAYMENT-SIGNATURE",
  description: "base64 of an x402 v2 PaymentPayload (scheme exact, an EIP-3009 authorization): pays the amount due.",
  schema: Type.String(),
};

const PAYMENT_RESPONSE_HEADER = {
  name: "PAYMENT-RESPONSE",
  description: "base64 of the x402 v2 SettlementResponse: success, transaction, network, payer (or errorReason).",
};

const payOperation = (method: "get" | "post"): Operation => ({
  method,
  path: "/api/public/payments/:id/x402",
  operationId: method === "get" ? "payPaymentWithX402" : "payPaymentWithX402Post",
  tag: "Public",
  summary: "Pay the payment over x402",
  description:
    "Without PAYMENT-SIGNATURE: 402 with the PAYMENT-REQUIRED header (and body) for the amount due. With it: the " +
    "authorization is verified and sent by the relayer; 200 with PAYMENT-RESPONSE once mined, 402 with the reason, " +
    "202 while one is on its way (then nothing more is asked). Nothing due: 200. See docs/agents-and-programs.md.",
  auth: false,
  params: PublicPaymentParams,
  headers: [SIGNATURE_HEADER],
  responses: {
    200: {
      description: "Paid (with PAYMENT-RESPONSE), or nothing due: the public view.",
      schema: PublicPayment,
      headers: [PAYMENT_RESPONSE_HEADER],
    },
    202: {
      description:
        "An authorization for it is on its way (sent, or mined and not credited yet): the public view. Nothing " +
        "is asked, so nothing is paid twice.",
      schema: PublicPayment,
    },
    402: {
      description: "Payment required, or refused with the reason (PAYMENT-RESPONSE then says why).",
      schema: X402PaymentRequired,
      headers: [
        { name: "PAYMENT-REQUIRED", description: "base64 of the x402 v2 PaymentRequired, as the body." },
        PAYMENT_RESPONSE_HEADER,
      ],
    },
  },
  errors: [400, 404, 429, 503],
});

const facilitatorBody = {
  name: "X402FacilitatorRequest",
  schema: FacilitatorRequestSchema,
  example: {
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      resource: { url: "https://api.example.com/report", mimeType: "application/json" },
      accepted: {
        scheme: "exact",
        network: "eip155:8453",
        amount: "10000",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
        maxTimeoutSeconds: 300,
        extra: { name: "USD Coin", version: "2" },
      },
      payload: {
        signature: "0x…",
        authorization: {
          from: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
          to: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
          value: "10000",
          validAfter: "1740672089",
          validBefore: "1740672389",
          nonce: "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
        },
      },
    },
    paymentRequirements: {
      scheme: "exact",
      network: "eip155:8453",
      amount: "10000",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
    },
  },
};

/** The per-payment x402 endpoint, and the facilitator of the merchant's own x402 resources. */
export const X402_OPERATIONS: Operation[] = [
  payOperation("get"),
  payOperation("post"),
  {
    method: "post",
    path: "/api/v1/x402/verify",
    operationId: "verifyX402Payment",
    tag: "x402",
    summary: "Verify an x402 payment (facilitator)",
    description:
      "x402 v2 facilitator /verify. payTo must be the account's payout address (accounts without a fee) or a " +
      "deposit address of one of its payments. A refusal is `isValid: false` with the reason.",
    auth: true,
    body: facilitatorBody,
    responses: { 200: { description: "The verdict.", schema: X402VerifyResponse } },
    errors: [400, 503],
  },
  {
    method: "post",
    path: "/api/v1/x402/settle",
    operationId: "settleX402Payment",
    tag: "x402",
    summary: "Settle an x402 payment (facilitator)",
    description:
      "x402 v2 facilitator /settle: the relayer sends the authorization and the answer waits for it to be mined. " +
      "Each settlement is a payment of the account. The same payload again answers the same result; money moves once.",
    auth: true,
    body: facilitatorBody,
    responses: { 200: { description: "The settlement.", schema: X402SettleResponse } },
    errors: [400, 503],
  },
  {
    method: "get",
    path: "/api/v1/x402/supported",
    operationId: "listX402Supported",
    tag: "x402",
    summary: "What the facilitator settles",
    auth: true,
    responses: { 200: { description: "Scheme exact on the settlement chain.", schema: X402Supported } },
    errors: [],
  },
];
