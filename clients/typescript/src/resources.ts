import { type List, type PagePromise, paged } from "./pages.ts";
import { type RequestOptions, segment, type Transport } from "./transport.ts";
import type {
  CreatedWebhookEndpoint,
  CreatePaymentLinkParams,
  CreatePaymentParams,
  CreateWebhookEndpointParams,
  DeletedWebhookEndpoint,
  Delivery,
  Event,
  ListDeliveriesParams,
  ListEventsParams,
  ListPaymentLinksParams,
  ListPaymentsParams,
  Payment,
  PaymentLink,
  UpdatePaymentLinkParams,
  WebhookEndpoint,
  WebhookEndpointTest,
} from "./types.ts";

/** `POST /api/v1/payments` and the reads of payments. */
export function payments(http: Transport) {
  const list = (query: ListPaymentsParams) =>
    http.request<List<Payment>>({ method: "GET", path: "/api/v1/payments", query });
  return {
    /**
     * Creates a payment. Without an `idempotencyKey` one is made up (a random UUID), so the
     * client's own resends after a lost answer never create a second payment; pass your own
     * (an order id) to make your retries safe too.
     */
    create: (body: CreatePaymentParams, options: RequestOptions = {}) =>
      http.request<Payment>({
        method: "POST",
        path: "/api/v1/payments",
        body,
        idempotencyKey: options.idempotencyKey ?? crypto.randomUUID(),
        signal: options.signal,
      }),
    retrieve: (id: string, options: RequestOptions = {}) =>
      http.request<Payment>({ method: "GET", path: `/api/v1/payments/${segment(id)}`, signal: options.signal }),
    /** Newest first; `for await` walks every page. */
    list: (query: ListPaymentsParams = {}): PagePromise<Payment> => paged(list, query),
  };
}

export function paymentLinks(http: Transport) {
  const list = (query: ListPaymentLinksParams) =>
    http.request<List<PaymentLink>>({ method: "GET", path: "/api/v1/payment_links", query });
  return {
    create: (body: CreatePaymentLinkParams, options: RequestOptions = {}) =>
      http.request<PaymentLink>({ method: "POST", path: "/api/v1/payment_links", body, ...options }),
    retrieve: (id: string, options: RequestOptions = {}) =>
      http.request<PaymentLink>({
        method: "GET",
        path: `/api/v1/payment_links/${segment(id)}`,
        signal: options.signal,
      }),
    /** Turns the link off (`{ active: false }`) or on again. */
    update: (id: string, body: UpdatePaymentLinkParams, options: RequestOptions = {}) =>
      http.request<PaymentLink>({ method: "POST", path: `/api/v1/payment_links/${segment(id)}`, body, ...options }),
    list: (query: ListPaymentLinksParams = {}): PagePromise<PaymentLink> => paged(list, query),
  };
}

export function webhookEndpoints(http: Transport) {
  return {
    /** The answer carries the signing secret, and no later one does (an idempotent replay aside). */
    create: (body: CreateWebhookEndpointParams, options: RequestOptions = {}) =>
      http.request<CreatedWebhookEndpoint>({ method: "POST", path: "/api/v1/webhook_endpoints", body, ...options }),
    /** Every endpoint of the account, on one page. */
    list: (options: RequestOptions = {}) =>
      http.request<List<WebhookEndpoint>>({ method: "GET", path: "/api/v1/webhook_endpoints", signal: options.signal }),
    delete: (id: string, options: RequestOptions = {}) =>
      http.request<DeletedWebhookEndpoint>({
        method: "DELETE",
        path: `/api/v1/webhook_endpoints/${segment(id)}`,
        signal: options.signal,
      }),
    /** Queues a signed `test` event to this endpoint only. */
    test: (id: string, options: RequestOptions = {}) =>
      http.request<WebhookEndpointTest>({
        method: "POST",
        path: `/api/v1/webhook_endpoints/${segment(id)}/test`,
        signal: options.signal,
      }),
  };
}

export function deliveries(http: Transport) {
  return {
    /** Deliveries to one endpoint, newest first, each with its attempts. */
    list: (endpointId: string, query: ListDeliveriesParams = {}): PagePromise<Delivery> =>
      paged(
        (q: ListDeliveriesParams) =>
          http.request<List<Delivery>>({
            method: "GET",
            path: `/api/v1/webhook_endpoints/${segment(endpointId)}/deliveries`,
            query: q,
          }),
        query,
      ),
    /** Sends the delivery again now, with the same webhook-id. */
    retry: (endpointId: string, deliveryId: string, options: RequestOptions = {}) =>
      http.request<Delivery>({
        method: "POST",
        path: `/api/v1/webhook_endpoints/${segment(endpointId)}/deliveries/${segment(deliveryId)}/retry`,
        signal: options.signal,
      }),
  };
}

export function events(http: Transport) {
  const list = (query: ListEventsParams) => http.request<List<Event>>({ method: "GET", path: "/api/v1/events", query });
  return {
    /** The account's events of the last 30 days, newest first. */
    list: (query: ListEventsParams = {}): PagePromise<Event> => paged(list, query),
    retrieve: (id: string, options: RequestOptions = {}) =>
      http.request<Event>({ method: "GET", path: `/api/v1/events/${segment(id)}`, signal: options.signal }),
  };
}
