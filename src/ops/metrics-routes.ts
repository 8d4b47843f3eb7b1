import { Elysia } from "elysia";
import { errorResponse, internalError } from "../http/errors.ts";
import { AuthError, NotFoundError } from "../lib/errors.ts";
import type { Logger } from "../lib/log.ts";
import { constantTimeEqual, sha256Hex } from "../lib/secrets.ts";
import type { Metrics } from "./metrics.ts";

/** GET /metrics (Prometheus), as STABLEGATE_METRICS, _ADDR and _TOKEN set it (read in src/config.ts). */
export interface MetricsConfig {
  /** A listener of its own for /metrics; null: on the main port, beside the API. */
  listen: { host: string; port: number } | null;
  /** Bearer token a scrape must present; required on the main port, optional on a listener of its own. */
  token: string | null;
}

/** `GET /metrics` on the main port: registered only when metrics are on and have no listener of their own. */
export function metricsRoutes(metrics: Metrics, config: MetricsConfig | null, log: Logger) {
  const app = new Elysia();
  if (!config || config.listen) return app;
  return app.get("/metrics", ({ request }) => scrape(metrics, config.token, request, log));
}

/**
 * `GET /metrics` on a listener of its own (STABLEGATE_METRICS_ADDR); nothing else is served
 * there. Its scrapes are not counted in the HTTP figures, which describe the main port.
 */
export function serveMetrics(
  metrics: Metrics,
  config: MetricsConfig,
  listen: { host: string; port: number },
  log: Logger,
) {
  return Bun.serve({
    hostname: listen.host,
    port: listen.port,
    async fetch(request) {
      if (request.method !== "GET" || new URL(request.url).pathname !== "/metrics")
        return errorResponse("NOT_FOUND", new NotFoundError(), log, request);
      try {
        return await scrape(metrics, config.token, request, log);
      } catch (failure) {
        return internalError(failure, log, request);
      }
    },
  });
}

async function scrape(metrics: Metrics, token: string | null, request: Request, log: Logger): Promise<Response> {
  if (token !== null && !bearerMatches(request.headers.get("authorization"), token)) {
    const refusal = new AuthError("a valid metrics token is required (Authorization: Bearer <token>)");
    const response = errorResponse("UNKNOWN", refusal, log, request);
    response.headers.set("www-authenticate", 'Bearer realm="metrics"');
    return response;
  }
  return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType } });
}

/** Hashed first, so the comparison takes the same time whatever the guess and its length. */
export function bearerMatches(header: string | null, token: string): boolean {
  const given = /^Bearer +(\S+)\s*$/i.exec(header ?? "")?.[1] ?? "";
  return constantTimeEqual(sha256Hex(given), sha256Hex(token));
}
