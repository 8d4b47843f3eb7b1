import { Elysia } from "elysia";
import { recoveryRoutes } from "./chain/recovering/routes.ts";
import { authorizationRoutes } from "./checkout/authorization-routes.ts";
import { pageRoutes } from "./checkout/page-routes.ts";
import { publicRoutes } from "./checkout/public-routes.ts";
import type { AppContext } from "./context.ts";
import { allDashboardRoutes } from "./dashboard/all-routes.ts";
import { signInRoutes } from "./dashboard/login-routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { createSessionGate } from "./dashboard/session-gate.ts";
import type { Db } from "./db/index.ts";
import { docsRoutes } from "./docs/routes.ts";
import { documentPageRoutes } from "./documents/page-routes.ts";
import { documentRoutes } from "./documents/routes.ts";
import { eventRoutes } from "./events/routes.ts";
import { authPlugin, createAuthenticate } from "./http/auth.ts";
import { MAX_BODY_BYTES, parseFormBody, parseJsonBody, parseMultipartBody, tooLarge } from "./http/body.ts";
import { errorResponse, internalError } from "./http/errors.ts";
import { openApiRoutes } from "./openapi/routes.ts";
import type { HttpMetrics } from "./ops/http-metrics.ts";
import { metricsRoutes } from "./ops/metrics-routes.ts";
import { opsRoutes } from "./ops/routes.ts";
import { linkPageRoutes } from "./payment-links/page-routes.ts";
import { paymentLinkRoutes } from "./payment-links/routes.ts";
import { paymentExportRoutes } from "./payments/export-routes.ts";
import { paymentRoutes } from "./payments/routes.ts";
import { claimRoutes } from "./refunds/claim-routes.ts";
import { refundExportRoutes } from "./refunds/export-routes.ts";
import { refundRoutes } from "./refunds/routes.ts";
import { webhookEndpointRoutes } from "./webhooks/routes.ts";
import { x402FacilitatorRoutes } from "./x402/facilitator-routes.ts";
import { x402PublicRoutes } from "./x402/routes.ts";

/** The HTTP application: body parsing and error mapping once, then each capability's routes. */
export function createApp(ctx: AppContext, db: Db) {
  const authenticate = createAuthenticate(ctx.accounts);
  const authed = authPlugin(authenticate);
  // Bun's `error` runs only when Elysia's handler itself throws: a JSON 500, never Bun's page.
  const lastResort = (error: unknown) => internalError(error, ctx.log);
  // Counted only when metrics are on: otherwise no request pays for the hooks.
  const http = ctx.config.metrics ? ctx.metrics.http : null;
  // No limit of Bun's own, which would answer an empty 413: body.ts enforces ours as it reads.
  return (
    new Elysia({ normalize: false, serve: { maxRequestBodySize: Number.MAX_SAFE_INTEGER, error: lastResort } })
      // Refused before a byte is read; a chunked body is cut at the limit by body.ts.
      .onRequest(({ request }) => {
        http?.started(request);
        if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY_BYTES)
          return http ? http.early(request, tooLarge()) : tooLarge();
      })
      .onParse(async ({ request }) => {
        // Elysia parses before `derive` runs, so merchant requests are authenticated here first.
        if (new URL(request.url).pathname.startsWith("/api/v1/")) {
          await authenticate(request);
          return parseJsonBody(request);
        }
        // Pages post HTML forms (the dashboard's logo upload a multipart one); the public JSON endpoints send JSON.
        const type = request.headers.get("content-type") ?? "";
        if (type.startsWith("multipart/form-data") && new URL(request.url).pathname.startsWith("/dashboard/"))
          return parseMultipartBody(request);
        return type.startsWith("application/x-www-form-urlencoded") ? parseFormBody(request) : parseJsonBody(request);
      })
      .onError(({ code, error, request }) => {
        const counted = (answer: Response) => (http ? http.failed(request, answer) : answer);
        try {
          return counted(errorResponse(code, error, ctx.log, request));
        } catch (failure) {
          return counted(internalError(failure, ctx.log, request));
        }
      })
      .use(answerCounter(http))
      .use(opsRoutes(ctx, db))
      .use(metricsRoutes(ctx.metrics, ctx.config.metrics, ctx.log))
      .use(openApiRoutes(ctx))
      .use(docsRoutes())
      .use(publicRoutes(ctx))
      .use(authorizationRoutes(ctx))
      .use(x402PublicRoutes(ctx))
      .use(pageRoutes(ctx))
      .use(linkPageRoutes(ctx))
      .use(claimRoutes(ctx))
      .use(documentPageRoutes(ctx))
      .use(paymentRoutes(ctx, authed))
      .use(paymentLinkRoutes(ctx, authed))
      .use(paymentExportRoutes(ctx, authed))
      .use(refundExportRoutes(ctx, authed))
      .use(refundRoutes(ctx, authed))
      .use(documentRoutes(ctx, authed))
      .use(recoveryRoutes(ctx, authed))
      .use(webhookEndpointRoutes(ctx, authed))
      .use(eventRoutes(ctx, authed))
      .use(x402FacilitatorRoutes(ctx, authed))
      .use(signInRoutes(ctx))
      .use(dashboardRoutes(createSessionGate(ctx.users), allDashboardRoutes(ctx)))
  );
}

export type App = ReturnType<typeof createApp>;

/**
 * Counts every answer once, errors and unknown routes included (src/ops/http-metrics.ts); no
 * hook at all when metrics are off. Named fields, not the whole context: Elysia reads a hook's
 * parameters to decide what to prepare for each request, and handing it the whole context cost
 * a fifth more CPU per retrieve.
 */
function answerCounter(http: HttpMetrics | null) {
  const plugin = new Elysia();
  if (!http) return plugin;
  return plugin.onAfterResponse({ as: "global" }, ({ request, route, set, responseValue }) =>
    http.finished(request, route, set, responseValue),
  );
}
