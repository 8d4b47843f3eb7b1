import { Elysia } from "elysia";
import { type AppContext, jsonResponse } from "../http/context.ts";
import { rawBody } from "../http/body.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { rawMemberText } from "../lib/raw-json.ts";
import { bodyValidator } from "../http/validate.ts";
import { CreatePaymentSchema } from "./schema.ts";

const createPaymentBody = bodyValidator(CreatePaymentSchema);

/** Merchant payment routes under /api/v1; `authed` supplies the account for each request. */
export function paymentRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { payments, idempotency, renderPayment, renderNewPayment } = ctx;
  return new Elysia()
    .use(authed)
    .post(
      "/api/v1/payments",
      async ({ account, body: raw, request }) => {
        const body = createPaymentBody(raw);
        const result = await idempotency.run(account.id, request.headers.get("idempotency-key"), body, async (commit) => {
          let json = "";
          await payments.create(account, body, rawMemberText(rawBody(request), "metadata"), (row) => {
            json = renderNewPayment(row);
            commit(201, json);
          });
          return { status: 201, body: json };
        });
        return jsonResponse(result.status, result.body, result.replayed ? { "idempotent-replayed": "true" } : {});
      },
    )
    .get("/api/v1/payments/:id", ({ account, params }) =>
      jsonResponse(200, renderPayment(payments.retrieve(account, params.id))),
    )
    .get("/api/v1/payments", ({ account, request }) => {
      const query = new URL(request.url).searchParams;
      const { rows, hasMore } = payments.list(account, {
        limit: query.get("limit"),
        starting_after: query.get("starting_after"),
        status: query.get("status"),
        created_gte: query.get("created[gte]"),
        created_lt: query.get("created[lt]"),
      });
      const data = rows.map(renderPayment).join(",");
      return jsonResponse(200, `{"object":"list","data":[${data}],"has_more":${hasMore}}`);
    });
}
