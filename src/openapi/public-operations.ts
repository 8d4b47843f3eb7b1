import { Type } from "@sinclair/typebox";
import { GaslessAuthorizationSchema } from "../checkout/authorization-routes.ts";
import {
  CrossChainBurnSchema,
  PublicPaymentParams,
  QrQuery,
  QuoteQuery,
  SyncSchema,
} from "../checkout/public-routes.ts";
import type { Operation } from "./operation.ts";
import { CrossChainBurn, PublicPayment } from "./payment-objects.ts";
import {
  CrossChainQuote,
  CrossChainSources,
  GaslessAccepted,
  GaslessOffer,
  Health,
  OpenApiDocument,
  Readiness,
} from "./public-objects.ts";

/**
 * The routes the checkout page and the widget call, keyed by the payment id alone, and the
 * operators' health checks. No API key; rate limited per payment.
 */
export const PUBLIC_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/public/payments/:id",
    operationId: "retrievePublicPayment",
    tag: "Public",
    summary: "What a payer may see of a payment",
    description: "Never metadata, fees, the customer's email, the payout address or anything about the account.",
    auth: false,
    params: PublicPaymentParams,
    responses: { 200: { description: "The public view of the payment.", schema: PublicPayment } },
    errors: [404, 429],
  },
  {
    method: "get",
    path: "/api/public/payments/:id/qr",
    operationId: "retrievePaymentQr",
    tag: "Public",
    summary: "A QR code of the deposit address or of an EIP-681 request",
    auth: false,
    params: PublicPaymentParams,
    query: QrQuery,
    responses: { 200: { description: "The QR code.", mediaType: "image/svg+xml" } },
    errors: [400, 404, 429],
  },
  {
    method: "post",
    path: "/api/public/payments/:id/sync",
    operationId: "syncPayment",
    tag: "Public",
    summary: "Report the payer's transaction",
    description:
      "Checks the transaction now instead of waiting for the chain watcher. 200 when it is mined with a USDC " +
      "transfer to the deposit address; 202 while it is not mined yet (the watcher credits it when it is).",
    auth: false,
    params: PublicPaymentParams,
    body: {
      name: "SyncRequest",
      schema: SyncSchema,
      example: { tx_hash: "0x5f0c2b3a8d9e4f1a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c" },
    },
    responses: {
      200: { description: "The transfer is recorded.", schema: PublicPayment },
      202: { description: "Not mined yet; the view is unchanged.", schema: PublicPayment },
    },
    errors: [400, 404, 422, 429, 503],
  },
  {
    method: "get",
    path: "/api/public/payments/:id/cross-chain",
    operationId: "quoteCrossChain",
    tag: "Public",
    summary: "Source chains for cross-chain funding, or a quote from one",
    description: "Without `chain`: the source chains offered. With it: how to pay what is due from that chain.",
    auth: false,
    params: PublicPaymentParams,
    query: QuoteQuery,
    responses: {
      200: {
        description: "The source chains (no `chain`) or the quote.",
        schema: Type.Union([CrossChainSources, CrossChainQuote]),
      },
    },
    errors: [400, 404, 429, 503],
  },
  {
    method: "post",
    path: "/api/public/payments/:id/cross-chain",
    operationId: "recordCrossChainBurn",
    tag: "Public",
    summary: "Record a burn made for the payment",
    description: "Recorded once; a repeat answers the same record. The server redeems it on the settlement chain.",
    auth: false,
    params: PublicPaymentParams,
    body: {
      name: "CrossChainBurnRequest",
      schema: CrossChainBurnSchema,
      example: {
        chain: "arbitrum-sepolia",
        tx_hash: "0x5f0c2b3a8d9e4f1a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c",
      },
    },
    responses: { 202: { description: "The burn, being followed.", schema: CrossChainBurn } },
    errors: [400, 404, 422, 429, 503],
  },
  {
    method: "get",
    path: "/api/public/payments/:id/authorization",
    operationId: "retrieveGaslessOffer",
    tag: "Public",
    summary: "What to sign to pay without gas",
    description:
      "EIP-3009 TransferWithAuthorization typed data for the amount due to the deposit address, valid for a few " +
      "minutes; the wallet adds `from` and a random `nonce` and signs with eth_signTypedData_v4. " +
      "`available` is false (with `reason`) when the payment is not waiting for funds or what is due is below " +
      "`floor`, the least the relayer submits (docs/gasless.md).",
    auth: false,
    params: PublicPaymentParams,
    responses: { 200: { description: "The offer.", schema: GaslessOffer } },
    errors: [404, 429, 503],
  },
  {
    method: "post",
    path: "/api/public/payments/:id/authorization",
    operationId: "payBySignature",
    tag: "Public",
    summary: "Pay by a signed authorization; the relayer pays the gas",
    description:
      "Checked (signature, amount, recipient, validity, the payer's balance, a simulation) before anything is " +
      "stored; the same authorization posted again answers the same record. A refusal says why in words (400); " +
      "at most 3 per payment and 10 per client an hour are accepted (429).",
    auth: false,
    params: PublicPaymentParams,
    body: {
      name: "GaslessAuthorizationRequest",
      schema: GaslessAuthorizationSchema,
      example: {
        authorization: {
          from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
          value: "25000000",
          validAfter: "1764600000",
          validBefore: "1764600660",
          nonce: "0x5f0c2b3a8d9e4f1a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c",
        },
        signature: `0x${"1b".repeat(65)}`,
      },
    },
    responses: { 202: { description: "Accepted: the relayer submits it.", schema: GaslessAccepted } },
    errors: [400, 404, 429, 503],
  },
  {
    method: "get",
    path: "/healthz",
    operationId: "health",
    tag: "Operations",
    summary: "Liveness",
    auth: false,
    responses: { 200: { description: "The process serves HTTP.", schema: Health } },
    errors: [],
  },
  {
    method: "get",
    path: "/readyz",
    operationId: "readiness",
    tag: "Operations",
    summary: "Readiness",
    description:
      'Without credentials only `{"status":"ready"}` (200) or `{"status":"not_ready"}` (503: the store ' +
      "cannot be reached). With `Authorization: Bearer <STABLEGATE_METRICS_TOKEN>` also the details: " +
      "the relayer and its gas on every chain, each chain's loops and last RPC error, bridging, the " +
      "leases; a degraded chain is reported, never fatal. Another bearer, or any when the server has no " +
      "metrics token, is 401.",
    auth: false,
    responses: {
      200: { description: "Ready; with the metrics token, the state of every watched chain.", schema: Readiness },
      503: { description: "The store cannot be reached.", schema: Readiness },
    },
    errors: [401],
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openApiDocument",
    tag: "Operations",
    summary: "This document",
    auth: false,
    responses: { 200: { description: "The OpenAPI 3.1 document.", schema: OpenApiDocument } },
    errors: [],
  },
];
