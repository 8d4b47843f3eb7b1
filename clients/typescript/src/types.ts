/**
 * Names for the API's objects, request bodies and list queries, all taken from ./openapi.ts:
 * the types openapi-typescript generated from the server's OpenAPI document.
 */
import type { components, operations } from "./openapi.ts";

type Schemas = components["schemas"];
type JsonBody<T> = T extends { content: { "application/json": infer Body } } ? Body : never;
type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;

export type Payment = Schemas["Payment"];
export type PaymentStatus = Schemas["PaymentStatus"];
export type LineItem = Schemas["LineItem"];
export type Transfer = Schemas["Transfer"];
export type PaymentLink = Schemas["PaymentLink"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type CreatedWebhookEndpoint = Schemas["CreatedWebhookEndpoint"];
export type DeletedWebhookEndpoint = Schemas["DeletedWebhookEndpoint"];
export type Delivery = Schemas["Delivery"];
export type WebhookEndpointTest = Schemas["TestSend"];
export type Refund = Schemas["Refund"];
export type RefundStatus = Schemas["RefundStatus"];
export type PaymentInstructions = Schemas["PaymentInstructions"];
/** Any event; narrow it by `type` (`payment.*`, `refund.*`, `account.updated`, `test`). */
export type Event = Schemas["Event"];
export type PaymentEvent = Schemas["PaymentEvent"];
export type RefundEvent = Schemas["RefundEvent"];
export type AccountEvent = Schemas["AccountEvent"];
export type TestEvent = Schemas["TestEvent"];
export type EventType = Event["type"];

export type CreatePaymentParams = JsonBody<operations["createPayment"]["requestBody"]>;
export type CreatePaymentLinkParams = JsonBody<operations["createPaymentLink"]["requestBody"]>;
export type UpdatePaymentLinkParams = JsonBody<operations["updatePaymentLink"]["requestBody"]>;
export type CreateRefundParams = JsonBody<operations["createRefund"]["requestBody"]>;
export type CreateWebhookEndpointParams = JsonBody<operations["createWebhookEndpoint"]["requestBody"]>;

export type ListPaymentsParams = QueryOf<"listPayments">;
export type ListPaymentLinksParams = QueryOf<"listPaymentLinks">;
export type ListDeliveriesParams = QueryOf<"listDeliveries">;
export type ListEventsParams = QueryOf<"listEvents">;
export type ListRefundsParams = QueryOf<"listRefunds">;
export type ListPaymentRefundsParams = QueryOf<"listPaymentRefunds">;
