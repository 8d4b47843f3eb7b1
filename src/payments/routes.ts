import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { rawBody } from "../http/body.ts";
import { idempotentResponse, jsonResponse, listJson } from "../http/json.ts";
import { idParam } from "../http/params.ts";
import { DEFAULT_LIMIT, decoded, instantParam, listQuery, oneOfParam } from "../http/query.ts";
import { bodyValidator } from "../http/validate.ts";
import { PAYMENT_ID, prefixedIdPattern } from "../lib/ids.ts";
import { rawMemberText } from "../lib/raw-json.ts";
import { createPaymentOnce } from "./create-once.ts";
import { CreatePaymentSchema } from "./schema.ts";
import { PAYMENT_STATUSES } from "./store.ts";

export const ListPaymentsQuery = listQuery(
  { pattern: PAYMENT_ID.source, what: "a payment" },
  {
    status: Type.Optional(oneOfParam("status", PAYMENT_STATUSES)),
    "created[gte]": Type.Optional(instantParam("created[gte]")),
    "created[lt]": Type.Optional(instantParam("created[lt]")),
    payment_link: Type.Optional(
      Type.String({ pattern: prefixedIdPattern("plink"), error: "payment_link must be the id of a payment link" }),
    ),
  },
);

export const PaymentParams = Type.Object({ id: idParam("id", PAYMENT_ID.source, (id) => `no payment ${id}`) });

const createPaymentBody = bodyValidator(CreatePaymentSchema);

/** Merchant payment routes under /api/v1; `authed` supplies the account for each request. */
export function paymentRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { accounts, payments, renderPayment, retrievePayment } = ctx;
  const createOnce = createPaymentOnce(ctx);
  return (
    new Elysia()
      // Before `authed`, whose key check it makes itself, together with its read (src/payments/retrieve.ts):
      // Elysia's hooks apply to the routes registered after them.
      .get("/api/v1/payments/:id", async ({ params, request }) =>
        jsonResponse(200, await retrievePayment(request.headers.get("authorization"), params.id)),
      )
      .use(authed)
      .post("/api/v1/payments", async ({ account, body: raw, request }) => {
        const body = createPaymentBody(raw);
        const key = request.headers.get("idempotency-key");
        const metadata = rawMemberText(rawBody(request), "metadata");
        const result = await createOnce(account, key, body, metadata, () =>
          accounts.authenticate(request.headers.get("authorization")),
        );
        return idempotentResponse(result);
      })
      .get(
        "/api/v1/payments",
        async ({ account, query: text }) => {
          const query = decoded(ListPaymentsQuery, text);
          const { rows, hasMore } = await payments.list(account, {
            limit: query.limit ?? DEFAULT_LIMIT,
            startingAfter: query.starting_after,
            status: query.status,
            createdGte: query["created[gte]"],
            createdLt: query["created[lt]"],
            paymentLink: query.payment_link,
          });
          const rendered: string[] = [];
          for (const row of rows) rendered.push(await renderPayment(row));
          return jsonResponse(200, listJson(rendered, hasMore));
        },
        { query: ListPaymentsQuery },
      )
  );
}
