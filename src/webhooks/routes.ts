import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../http/auth.ts";
import { type AppContext, jsonResponse } from "../http/context.ts";

const CreateEndpointSchema = t.Object(
  { url: t.String({ minLength: 1, maxLength: 2048, error: "url is required: an https URL of at most 2048 characters" }) },
  { additionalProperties: false },
);

export function webhookEndpointRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { webhookEndpoints, idempotency } = ctx;
  return new Elysia()
    .use(authed)
    .post(
      "/api/v1/webhook_endpoints",
      async ({ account, body, request }) => {
        const result = await idempotency.run(account.id, request.headers.get("idempotency-key"), body, async (commit) => {
          const created = await webhookEndpoints.create(account, body.url, (endpoint) => commit(201, JSON.stringify(endpoint)));
          return { status: 201, body: JSON.stringify(created) };
        });
        return jsonResponse(result.status, result.body, result.replayed ? { "idempotent-replayed": "true" } : {});
      },
      { body: CreateEndpointSchema },
    )
    .get("/api/v1/webhook_endpoints", ({ account }) => webhookEndpoints.list(account))
    .delete("/api/v1/webhook_endpoints/:id", ({ account, params }) => webhookEndpoints.delete(account, params.id));
}
