import { type List, type PagePromise, paged } from "./pages.ts";
import { type RequestOptions, segment, type Transport } from "./transport.ts";
import type { CreateRefundParams, ListPaymentRefundsParams, ListRefundsParams, Refund } from "./types.ts";

/**
 * Refunds: the record of what is owed back to a payer, which the merchant pays from their own
 * wallet (`payment_instructions`), and the chain's word that it was paid (`status: "succeeded"`).
 */
export function refunds(http: Transport) {
  const list = (query: ListRefundsParams) =>
    http.request<List<Refund>>({ method: "GET", path: "/api/v1/refunds", query });
  return {
    /**
     * Refunds `amount` of a payment (everything received not yet refunded without it). Without an
     * `idempotencyKey` one is made up, so the client's own resend after a lost answer never
     * creates a second refund; pass your own (a return's id) to make your retries safe too.
     */
    create: (paymentId: string, body: CreateRefundParams = {}, options: RequestOptions = {}) =>
      http.request<Refund>({
        method: "POST",
        path: `/api/v1/payments/${segment(paymentId)}/refunds`,
        body,
        idempotencyKey: options.idempotencyKey ?? crypto.randomUUID(),
        signal: options.signal,
      }),
    retrieve: (id: string, options: RequestOptions = {}) =>
      http.request<Refund>({ method: "GET", path: `/api/v1/refunds/${segment(id)}`, signal: options.signal }),
    /** The account's refunds, newest first; `for await` walks every page. */
    list: (query: ListRefundsParams = {}): PagePromise<Refund> => paged(list, query),
    /** One payment's refunds, newest first; `for await` walks every page. */
    listForPayment: (paymentId: string, query: ListPaymentRefundsParams = {}): PagePromise<Refund> =>
      paged(
        (q: ListPaymentRefundsParams) =>
          http.request<List<Refund>>({
            method: "GET",
            path: `/api/v1/payments/${segment(paymentId)}/refunds`,
            query: q,
          }),
        query,
      ),
    /**
     * Cancels a refund not paid yet. A refund that succeeded, was canceled already, or has a transfer
     * paying it on chain is a `ConflictError` (sent without an `idempotencyKey`, the default).
     */
    cancel: (id: string, options: RequestOptions = {}) =>
      http.request<Refund>({ method: "POST", path: `/api/v1/refunds/${segment(id)}/cancel`, ...options }),
  };
}
