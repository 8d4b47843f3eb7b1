import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { idempotentResponse } from "../http/json.ts";
import { idParam } from "../http/params.ts";
import { DEFAULT_LIMIT, decoded, listQuery } from "../http/query.ts";
import { bodyValidator } from "../http/validate.ts";
import { prefixedIdPattern } from "../lib/ids.ts";
import type { RateLimit } from "../rate-limits/index.ts";
import { MAX_URL_LENGTH, URL_RULE } from "./endpoints.ts";

export const CreateEndpointSchema = Type.Object(
  { url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, rule: URL_RULE }) },
  { additionalProperties: false },
);
const createEndpointBody = bodyValidator(CreateEndpointSchema);

export const ListDeliveriesQuery = listQuery({ pattern: prefixedIdPattern("whd"), what: "a delivery" }, {});

const endpointId = idParam("id", prefixedIdPattern("we"), (id) => `no webhook endpoint ${id}`);
export const EndpointParams = Type.Object({ id: endpointId });
export const DeliveryParams = Type.Object({
  id: endpointId,
  delivery_id: idParam("delivery_id", prefixedIdPattern("whd"), (id) => `no delivery ${id}`),
});

/**
 * Sends a merchant can ask for, per endpoint (docs/webhooks.md): enough to debug a receiver
 * or replay a backlog after an outage, too few to turn the server against someone's URL.
 */
export const WEBHOOK_LIMITS: { test: RateLimit; retry: RateLimit } = {
  test: { burst: 10, perSecond: 1 / 6, message: "too many test events for this webhook endpoint; try again shortly" },
  retry: { burst: 100, perSecond: 10, message: "too many retries for this webhook endpoint; try again shortly" },
};

/**
 * The admission check for a `test` or `retry` send, shared by the API and the dashboard so both
 * draw on one allowance per endpoint. The services take it only once the endpoint is known to be
 * the caller's: unknown ids cost nothing, and nobody can use up another merchant's allowance.
 */
export const webhookThrottle =
  ({ rateLimiter, webhookLimits }: AppContext, kind: "test" | "retry", endpointId: string) =>
  () =>
    rateLimiter.take(`webhook-${kind}:${endpointId}`, webhookLimits[kind]);

export function webhookEndpointRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { webhookEndpoints, deliveries, idempotency } = ctx;
  const throttle = (kind: "test" | "retry", endpointId: string) => webhookThrottle(ctx, kind, endpointId);
  return new Elysia()
    .use(authed)
    .post("/api/v1/webhook_endpoints", async ({ account, body: raw, request }) => {
      const body = createEndpointBody(raw);
      const result = await idempotency.run(account.id, request.headers.get("idempotency-key"), body, async (commit) => {
        const created = await webhookEndpoints.create(account, body.url, (endpoint) =>
          commit(201, JSON.stringify(endpoint)),
        );
        return { status: 201, body: JSON.stringify(created) };
      });
      return idempotentResponse(result);
    })
    .get("/api/v1/webhook_endpoints", ({ account }) => webhookEndpoints.list(account))
    .delete("/api/v1/webhook_endpoints/:id", ({ account, params }) => webhookEndpoints.delete(account, params.id), {
      params: EndpointParams,
    })
    .get(
      "/api/v1/webhook_endpoints/:id/deliveries",
      ({ account, params, query: text }) => {
        const query = decoded(ListDeliveriesQuery, text);
        return deliveries.list(account, params.id, query.starting_after ?? null, query.limit ?? DEFAULT_LIMIT);
      },
      { query: ListDeliveriesQuery, params: EndpointParams },
    )
    .post(
      "/api/v1/webhook_endpoints/:id/deliveries/:delivery_id/retry",
      ({ account, params, set }) => {
        set.status = 202;
        return deliveries.retry(account, params.id, params.delivery_id, throttle("retry", params.id));
      },
      { params: DeliveryParams },
    )
    .post(
      "/api/v1/webhook_endpoints/:id/test",
      ({ account, params, set }) => {
        set.status = 202;
        return deliveries.sendTest(account, params.id, throttle("test", params.id));
      },
      { params: EndpointParams },
    );
}
