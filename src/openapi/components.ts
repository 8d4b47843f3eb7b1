import type { TSchema } from "@sinclair/typebox";
import {
  DeliveryList,
  EventList,
  PaymentLinkList,
  PaymentList,
  RecoveryList,
  WebhookEndpointList,
} from "./merchant-operations.ts";
import {
  AccountEvent,
  CreatedWebhookEndpoint,
  DeletedWebhookEndpoint,
  Delivery,
  ErrorBody,
  Event,
  PaymentEvent,
  PaymentLink,
  Recovery,
  RefundEvent,
  TestEvent,
  TestSend,
  WebhookEndpoint,
} from "./objects.ts";
import {
  CrossChainBurn,
  LineItem,
  Payment,
  PaymentStatus,
  PublicAuthorization,
  PublicPayment,
  Speed,
  Transfer,
} from "./payment-objects.ts";
import {
  CrossChainQuote,
  CrossChainSources,
  GaslessAccepted,
  GaslessOffer,
  Health,
  Readiness,
} from "./public-objects.ts";
import { PaymentInstructions, Refund, RefundStatus } from "./refund-objects.ts";
import { RefundList } from "./refund-operations.ts";
import { X402PaymentRequired, X402SettleResponse, X402Supported, X402VerifyResponse } from "./x402-operations.ts";

/**
 * The named schemas of the document (`components.schemas`, by their `$id`): wherever one of
 * them appears inside another, the document refers to it by name, so generated clients get one
 * type per object.
 */
export const COMPONENTS: readonly TSchema[] = [
  ErrorBody,
  PaymentStatus,
  Speed,
  LineItem,
  Transfer,
  CrossChainBurn,
  Payment,
  PaymentList,
  PaymentLink,
  PaymentLinkList,
  WebhookEndpoint,
  CreatedWebhookEndpoint,
  DeletedWebhookEndpoint,
  WebhookEndpointList,
  Delivery,
  DeliveryList,
  TestSend,
  RefundStatus,
  PaymentInstructions,
  Refund,
  RefundList,
  PaymentEvent,
  RefundEvent,
  AccountEvent,
  TestEvent,
  Event,
  EventList,
  Recovery,
  RecoveryList,
  PublicPayment,
  PublicAuthorization,
  GaslessOffer,
  GaslessAccepted,
  CrossChainSources,
  CrossChainQuote,
  Health,
  Readiness,
  X402PaymentRequired,
  X402VerifyResponse,
  X402SettleResponse,
  X402Supported,
];
