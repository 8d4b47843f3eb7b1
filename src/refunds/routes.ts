import { type StaticDecode, Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { rawBody } from "../http/body.ts";
import { idempotentResponse, jsonResponse, listJson } from "../http/json.ts";
import { idParam } from "../http/params.ts";
import { DEFAULT_LIMIT, decoded, instantParam, listQuery, oneOfParam } from "../http/query.ts";
import { bodyValidator } from "../http/validate.ts";
import { PAYMENT_ID, prefixedIdPattern } from "../lib/ids.ts";
import { rawMemberText } from "../lib/raw-json.ts";
import { PaymentParams } from "../payments/routes.ts";
import { CreateRefundSchema } from "./schema.ts";
import { REFUND_STATUSES } from "./store.ts";

const ID = prefixedIdPattern("re");
const filters = {
  status: Type.Optional(oneOfParam("status", REFUND_STATUSES)),
  "created[gte]": Type.Optional(instantParam("created[gte]")),
  "created[lt]": Type.Optional(instantParam("created[lt]")),
};
export const ListRefundsQuery = listQuery(
  { pattern: ID, what: "a refund" },
  {
    ...filters,
    payment: Type.Optional(Type.String({ pattern: PAYMENT_ID.source, error: "payment must be the id of a payment" })),
  },
);
export const ListPaymentRefundsQuery = listQuery({ pattern: ID, what: "a refund" }, filters);
export const RefundParams = Type.Object({ id: idParam("id", ID, (id) => `no refund ${id}`) });

const createRefundBody = bodyValidator(CreateRefundSchema);

/** Merchant refund routes under /api/v1 (docs/refunds.md), with the payments' auth, idempotency and errors. */
export function refundRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { refunds, idempotency } = ctx;
  /** One page of the account's refunds (of one payment, when `paymentId` is given). */
  const page = async (account: Account, query: StaticDecode<typeof ListPaymentRefundsQuery>, paymentId?: string) => {
    const { rows, hasMore } = await refunds.list(account, {
      limit: query.limit ?? DEFAULT_LIMIT,
      startingAfter: query.starting_after,
      paymentId,
      status: query.status,
      createdGte: query["created[gte]"],
      createdLt: query["created[lt]"],
    });
    return jsonResponse(200, listJson(rows.map(refunds.json), hasMore));
  };
  return new Elysia()
    .use(authed)
    .post(
      "/api/v1/payments/:id/refunds",
      async ({ account, params, body: raw, request }) => {
        const body = createRefundBody(raw);
        const key = request.headers.get("idempotency-key");
        // The key also covers which payment is refunded: the same key on another payment is another request.
        const result = await idempotency.run(account.id, key, { payment: params.id, ...body }, async (commit) => {
          const row = await refunds.create(
            account,
            params.id,
            body,
            rawMemberText(rawBody(request), "metadata"),
            (row) => commit(201, refunds.json(row)),
          );
          return { status: 201, body: refunds.json(row) };
        });
        return idempotentResponse(result);
      },
      { params: PaymentParams },
    )
    .get(
      "/api/v1/payments/:id/refunds",
      ({ account, params, query }) => page(account, decoded(ListPaymentRefundsQuery, query), params.id),
      { params: PaymentParams, query: ListPaymentRefundsQuery },
    )
    .get(
      "/api/v1/refunds/:id",
      async ({ account, params }) => jsonResponse(200, refunds.json(await refunds.retrieve(account, params.id))),
      { params: RefundParams },
    )
    .post(
      "/api/v1/refunds/:id/cancel",
      async ({ account, params, request }) => {
        const key = request.headers.get("idempotency-key");
        const result = await idempotency.run(account.id, key, { cancel: params.id }, async (commit) => {
          const row = await refunds.cancel(account, params.id, (row) => commit(200, refunds.json(row)));
          return { status: 200, body: refunds.json(row) };
        });
        return idempotentResponse(result);
      },
      { params: RefundParams },
    )
    .get(
      "/api/v1/refunds",
      ({ account, query: text }) => {
        const query = decoded(ListRefundsQuery, text);
        return page(account, query, query.payment);
      },
      { query: ListRefundsQuery },
    );
}
