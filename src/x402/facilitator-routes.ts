import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { bodyValidator } from "../http/validate.ts";
import { FacilitatorRequestSchema } from "./protocol.ts";

const facilitatorBody = bodyValidator(FacilitatorRequestSchema);

/**
 * The x402 facilitator API (v2 §7) at `{base}/api/v1/x402`, with the merchant's API key as every
 * /api/v1 route: the official middleware's facilitator client passes it through
 * `createAuthHeaders`. Refusals are answers (isValid / success false, 200), as the spec's are; a
 * body that is no facilitator request at all is a 400.
 */
export function x402FacilitatorRoutes(ctx: AppContext, authed: AuthPlugin) {
  return new Elysia()
    .use(authed)
    .post("/api/v1/x402/verify", async ({ account, body }) =>
      ctx.x402.facilitator.verify(account, facilitatorBody(body)),
    )
    .post("/api/v1/x402/settle", async ({ account, body }) =>
      ctx.x402.facilitator.settle(account, facilitatorBody(body)),
    )
    .get("/api/v1/x402/supported", () => ctx.x402.facilitator.supported());
}
