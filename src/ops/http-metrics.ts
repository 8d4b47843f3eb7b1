import { Counter, Histogram, type Registry } from "prom-client";

/** The route label of a request that matched no route, or was answered before routing. */
export const UNMATCHED = "unmatched";

/** Methods kept as labels; any other (a scanner's invention) counts as OTHER, so labels stay few. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export type HttpMetrics = ReturnType<typeof createHttpMetrics>;

/**
 * HTTP requests by method, route pattern and status, and their latency, labelled by the route
 * as registered (`/api/v1/payments/:id`), never the raw path, so ids never become label values.
 * app.ts calls these from its hooks: the clock starts in onRequest and stops in onAfterResponse,
 * which Elysia runs once per answer, errors and unknown routes included, and for a stream when
 * its headers are sent (a stream's latency is the time to its first byte, not its length).
 */
export function createHttpMetrics(registers: Registry[]) {
  const requests = new Counter({
    name: "stablegate_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    registers,
  });
  const duration = new Histogram({
    name: "stablegate_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer's headers, by method and route pattern.",
    labelNames: ["method", "route"],
    registers,
  });
  const started = new WeakMap<Request, number>();
  // The after-response hook sees neither the status nor the body of an error answer.
  const errorStatus = new WeakMap<Request, number>();

  function observe(request: Request, route: string | undefined, status: number): void {
    const start = started.get(request);
    if (start === undefined) return; // counted already
    started.delete(request);
    const labels = { method: METHODS.has(request.method) ? request.method : "OTHER", route: route || UNMATCHED };
    requests.inc({ ...labels, status: String(status) });
    duration.observe(labels, (performance.now() - start) / 1000);
  }

  return {
    /** onRequest, first of all: the clock starts. */
    started: (request: Request) => void started.set(request, performance.now()),
    /** onError: the answer the error became. */
    failed(request: Request, response: Response): Response {
      errorStatus.set(request, response.status);
      return response;
    },
    /** An answer given in onRequest, before routing, for which no after-response hook runs. */
    early(request: Request, response: Response): Response {
      observe(request, undefined, response.status);
      return response;
    },
    /**
     * onAfterResponse, with what it knows of the answer: the route as registered (absent when
     * none matched), the status set by the handler, and what the handler returned.
     */
    finished(request: Request, route: string | undefined, set: { status?: number | string }, responseValue: unknown) {
      const status =
        errorStatus.get(request) ??
        (responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
      observe(request, route, status);
    },
  };
}
