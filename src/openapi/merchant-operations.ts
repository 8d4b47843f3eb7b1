import { Type } from "@sinclair/typebox";
import { RECOVERY_GAS_CAP } from "../chain/recovering/gas.ts";
import { RECOVERIES_PER_ACCOUNT } from "../chain/recovering/limits.ts";
import { RecoveryParams } from "../chain/recovering/routes.ts";
import { RecoverSchema } from "../chain/recovering/schema.ts";
import { EventParams, ListEventsQuery, StreamQuery } from "../events/routes.ts";
import { LinkParams, ListLinksQuery } from "../payment-links/routes.ts";
import { CreatePaymentLinkSchema, UpdatePaymentLinkSchema } from "../payment-links/schema.ts";
import { ExportQuery } from "../payments/export-routes.ts";
import { ListPaymentsQuery, PaymentParams } from "../payments/routes.ts";
import { CreatePaymentSchema } from "../payments/schema.ts";
import { CreateEndpointSchema, DeliveryParams, EndpointParams, ListDeliveriesQuery } from "../webhooks/routes.ts";
import {
  CreatedWebhookEndpoint,
  DeletedWebhookEndpoint,
  Delivery,
  Event,
  listOf,
  PaymentLink,
  Recovery,
  TestSend,
  WebhookEndpoint,
} from "./objects.ts";
import type { Operation } from "./operation.ts";
import { Payment } from "./payment-objects.ts";

export const PaymentList = listOf(Payment, "PaymentList");
export const PaymentLinkList = listOf(PaymentLink, "PaymentLinkList");
export const WebhookEndpointList = listOf(WebhookEndpoint, "WebhookEndpointList");
export const DeliveryList = listOf(Delivery, "DeliveryList");
export const EventList = listOf(Event, "EventList");
export const RecoveryList = listOf(Recovery, "RecoveryList");

/** Every merchant route (`/api/v1/...`): bearer key, JSON, `{"error"}` on refusal. */
export const MERCHANT_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/api/v1/payments",
    operationId: "createPayment",
    tag: "Payments",
    summary: "Create a payment",
    description: "Give `amount` or `line_items` (whose total is the amount). The payer pays at `pay_url`.",
    auth: true,
    idempotent: true,
    body: {
      name: "CreatePaymentRequest",
      schema: CreatePaymentSchema,
      example: {
        line_items: [{ description: "Espresso beans 1kg", unit_amount: "12.50", quantity: 2 }],
        description: "Order #1042",
        reference: "1042",
        customer_email: "ana@example.com",
        success_url: "https://shop.example.com/thanks",
        metadata: { order_id: "1042" },
      },
    },
    responses: { 201: { description: "The payment.", schema: Payment, replayable: true } },
    errors: [400, 409, 422],
  },
  {
    method: "get",
    path: "/api/v1/payments",
    operationId: "listPayments",
    tag: "Payments",
    summary: "List payments",
    description: "Newest first.",
    auth: true,
    query: ListPaymentsQuery,
    responses: { 200: { description: "A page of payments.", schema: PaymentList } },
    errors: [400],
  },
  {
    method: "get",
    path: "/api/v1/payments/:id",
    operationId: "retrievePayment",
    tag: "Payments",
    summary: "Retrieve a payment",
    auth: true,
    params: PaymentParams,
    responses: { 200: { description: "The payment.", schema: Payment } },
    errors: [404],
  },
  {
    method: "get",
    path: "/api/v1/payments.csv",
    operationId: "exportPayments",
    tag: "Payments",
    summary: "Export payments as CSV",
    description: "Every payment the filters match, newest first, streamed as a CSV attachment.",
    auth: true,
    query: ExportQuery,
    responses: { 200: { description: "The CSV file.", mediaType: "text/csv" } },
    errors: [400],
  },
  {
    method: "post",
    path: "/api/v1/payment_links",
    operationId: "createPaymentLink",
    tag: "Payment links",
    summary: "Create a payment link",
    description: "A reusable page where each payer creates their own payment.",
    auth: true,
    idempotent: true,
    body: {
      name: "CreatePaymentLinkRequest",
      schema: CreatePaymentLinkSchema,
      example: { min_amount: "5.00", description: "Tip jar", success_url: "https://shop.example.com/thanks" },
    },
    responses: { 201: { description: "The payment link.", schema: PaymentLink, replayable: true } },
    errors: [400, 409, 422],
  },
  {
    method: "get",
    path: "/api/v1/payment_links",
    operationId: "listPaymentLinks",
    tag: "Payment links",
    summary: "List payment links",
    description: "Newest first.",
    auth: true,
    query: ListLinksQuery,
    responses: { 200: { description: "A page of payment links.", schema: PaymentLinkList } },
    errors: [400],
  },
  {
    method: "get",
    path: "/api/v1/payment_links/:id",
    operationId: "retrievePaymentLink",
    tag: "Payment links",
    summary: "Retrieve a payment link",
    auth: true,
    params: LinkParams,
    responses: { 200: { description: "The payment link.", schema: PaymentLink } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/payment_links/:id",
    operationId: "updatePaymentLink",
    tag: "Payment links",
    summary: "Activate or deactivate a payment link",
    auth: true,
    idempotent: true,
    params: LinkParams,
    body: { name: "UpdatePaymentLinkRequest", schema: UpdatePaymentLinkSchema, example: { active: false } },
    responses: { 200: { description: "The payment link.", schema: PaymentLink, replayable: true } },
    errors: [400, 404, 409, 422],
  },
  {
    method: "post",
    path: "/api/v1/webhook_endpoints",
    operationId: "createWebhookEndpoint",
    tag: "Webhook endpoints",
    summary: "Register a webhook endpoint",
    description: "The answer carries the endpoint's signing secret, and no other answer does.",
    auth: true,
    idempotent: true,
    body: {
      name: "CreateWebhookEndpointRequest",
      schema: CreateEndpointSchema,
      example: { url: "https://shop.example.com/webhooks/stablegate" },
    },
    responses: {
      201: { description: "The endpoint and its secret.", schema: CreatedWebhookEndpoint, replayable: true },
    },
    errors: [400, 409, 422],
  },
  {
    method: "get",
    path: "/api/v1/webhook_endpoints",
    operationId: "listWebhookEndpoints",
    tag: "Webhook endpoints",
    summary: "List webhook endpoints",
    auth: true,
    responses: { 200: { description: "Every endpoint of the account.", schema: WebhookEndpointList } },
    errors: [],
  },
  {
    method: "delete",
    path: "/api/v1/webhook_endpoints/:id",
    operationId: "deleteWebhookEndpoint",
    tag: "Webhook endpoints",
    summary: "Delete a webhook endpoint",
    description: "Whatever was still to be sent to it is canceled.",
    auth: true,
    params: EndpointParams,
    responses: { 200: { description: "The endpoint is deleted.", schema: DeletedWebhookEndpoint } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/webhook_endpoints/:id/test",
    operationId: "testWebhookEndpoint",
    tag: "Webhook endpoints",
    summary: "Send a test event",
    description: "A signed `test` event to this endpoint only.",
    auth: true,
    params: EndpointParams,
    responses: { 202: { description: "The test event is queued.", schema: TestSend } },
    errors: [400, 404, 429],
  },
  {
    method: "get",
    path: "/api/v1/webhook_endpoints/:id/deliveries",
    operationId: "listDeliveries",
    tag: "Webhook endpoints",
    summary: "List an endpoint's deliveries",
    description: "Newest first, each with its attempts.",
    auth: true,
    params: EndpointParams,
    query: ListDeliveriesQuery,
    responses: { 200: { description: "A page of deliveries.", schema: DeliveryList } },
    errors: [400, 404],
  },
  {
    method: "post",
    path: "/api/v1/webhook_endpoints/:id/deliveries/:delivery_id/retry",
    operationId: "retryDelivery",
    tag: "Webhook endpoints",
    summary: "Send a delivery again",
    description: "Now, whatever its state; its `webhook-id` stays the same.",
    auth: true,
    params: DeliveryParams,
    responses: { 202: { description: "The delivery, queued.", schema: Delivery } },
    errors: [400, 404, 429],
  },
  {
    method: "get",
    path: "/api/v1/events",
    operationId: "listEvents",
    tag: "Events",
    summary: "List events",
    description: "The account's events of the last 30 days, newest first: a reconciliation aid beside webhooks.",
    auth: true,
    query: ListEventsQuery,
    responses: { 200: { description: "A page of events.", schema: EventList } },
    errors: [400],
  },
  {
    method: "get",
    path: "/api/v1/events/stream",
    operationId: "streamEvents",
    tag: "Events",
    summary: "Follow events as they happen",
    description:
      "Server-Sent Events: each event is a message whose `id` is the event id, `event` its type and `data` " +
      "the event as webhooks send it; a comment every 15 seconds keeps the connection open. Resume with " +
      "`Last-Event-ID` (or `after`). At most 2 streams per API key and 5 per account. The stream ends " +
      "once its key is revoked (within 2 seconds; nothing written after goes out).",
    auth: true,
    query: StreamQuery,
    headers: [
      {
        name: "Last-Event-ID",
        description: "Resume just after this event (EventSource sends it when it reconnects).",
        schema: Type.String({ pattern: "^evt_[0-9A-Za-z]{24}$" }),
      },
    ],
    responses: { 200: { description: "The stream of events.", mediaType: "text/event-stream" } },
    errors: [400, 429],
  },
  {
    method: "get",
    path: "/api/v1/events/:id",
    operationId: "retrieveEvent",
    tag: "Events",
    summary: "Retrieve an event",
    auth: true,
    params: EventParams,
    responses: { 200: { description: "The event, as webhooks sent it.", schema: Event } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/payments/:id/recover",
    operationId: "recoverPayment",
    tag: "Recoveries",
    summary: "Recover a token sent by mistake",
    description:
      "Returns another token, or the native coin, that reached the deposit address to the payout address on " +
      "that chain. 202 with a new recovery; 200 with the one already under way for that token and chain. " +
      "429 (with Retry-After) once the payment's token on that chain was recovered in the last 24 hours, or " +
      `the account has asked for ${RECOVERIES_PER_ACCOUNT} recoveries in that time; 422 for a token that never ` +
      `sent anything to the deposit address, or whose recovery would take more than ${RECOVERY_GAS_CAP} gas.`,
    auth: true,
    idempotent: true,
    params: PaymentParams,
    body: {
      name: "RecoverRequest",
      schema: RecoverSchema,
      example: { chain: "arbitrum", token: "0xdAC17F958D2ee523a2206206994597C13D831ec7" },
    },
    responses: {
      200: {
        description: "The recovery already under way, or as it stands now on a replay.",
        schema: Recovery,
        replayable: true,
      },
      202: { description: "The recovery, accepted.", schema: Recovery },
    },
    errors: [400, 404, 409, 422, 429, 503],
  },
  {
    method: "get",
    path: "/api/v1/payments/:id/recoveries",
    operationId: "listPaymentRecoveries",
    tag: "Recoveries",
    summary: "List a payment's recoveries",
    description: "Newest first, not paginated.",
    auth: true,
    params: PaymentParams,
    responses: { 200: { description: "The payment's recoveries.", schema: RecoveryList } },
    errors: [404],
  },
  {
    method: "get",
    path: "/api/v1/recoveries/:id",
    operationId: "retrieveRecovery",
    tag: "Recoveries",
    summary: "Retrieve a recovery",
    auth: true,
    params: RecoveryParams,
    responses: { 200: { description: "The recovery.", schema: Recovery } },
    errors: [404],
  },
];
