import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { rawBody } from "../http/body.ts";
import { idempotentResponse, jsonResponse, listJson } from "../http/json.ts";
import { idParam } from "../http/params.ts";
import { DEFAULT_LIMIT, decoded, listQuery } from "../http/query.ts";
import { bodyValidator } from "../http/validate.ts";
import { prefixedIdPattern } from "../lib/ids.ts";
import { rawMemberText } from "../lib/raw-json.ts";
import { CreatePaymentLinkSchema, UpdatePaymentLinkSchema } from "./schema.ts";
import { paymentLinkJson } from "./view.ts";

const ID = prefixedIdPattern("plink");
export const ListLinksQuery = listQuery({ pattern: ID, what: "a payment link" }, {});
export const LinkParams = Type.Object({ id: idParam("id", ID, (id) => `no payment link ${id}`) });

const createLinkBody = bodyValidator(CreatePaymentLinkSchema);
const updateLinkBody = bodyValidator(UpdatePaymentLinkSchema);

/** Merchant payment link routes under /api/v1, with the payments' auth, idempotency and errors. */
export function paymentLinkRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { paymentLinks, idempotency } = ctx;
  const render = (row: Parameters<typeof paymentLinkJson>[0]) => paymentLinkJson(row, ctx.view.baseUrl);
  return new Elysia()
    .use(authed)
    .post("/api/v1/payment_links", async ({ account, body: raw, request }) => {
      const body = createLinkBody(raw);
      const result = await idempotency.run(account.id, request.headers.get("idempotency-key"), body, async (commit) => {
        const row = await paymentLinks.create(account, body, rawMemberText(rawBody(request), "metadata"), (row) =>
          commit(201, render(row)),
        );
        return { status: 201, body: render(row) };
      });
      return idempotentResponse(result);
    })
    .get(
      "/api/v1/payment_links/:id",
      async ({ account, params }) => jsonResponse(200, render(await paymentLinks.retrieve(account, params.id))),
      { params: LinkParams },
    )
    .post(
      "/api/v1/payment_links/:id",
      async ({ account, params, body: raw, request }) => {
        const body = updateLinkBody(raw);
        const key = request.headers.get("idempotency-key");
        // The key also covers which link is changed: the same key on another link is another request.
        const result = await idempotency.run(account.id, key, { id: params.id, ...body }, async (commit) => {
          const row = await paymentLinks.setActive(account, params.id, body.active, (row) => commit(200, render(row)));
          return { status: 200, body: render(row) };
        });
        return idempotentResponse(result);
      },
      { params: LinkParams },
    )
    .get(
      "/api/v1/payment_links",
      async ({ account, query: text }) => {
        const query = decoded(ListLinksQuery, text);
        const { rows, hasMore } = await paymentLinks.list(account, {
          limit: query.limit ?? DEFAULT_LIMIT,
          startingAfter: query.starting_after,
        });
        return jsonResponse(200, listJson(rows.map(render), hasMore));
      },
      { query: ListLinksQuery },
    );
}
