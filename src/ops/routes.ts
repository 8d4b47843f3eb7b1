import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { Db } from "../db/index.ts";
import { errorResponse } from "../http/errors.ts";
import { type ReadyStatus, readinessAccess } from "./readiness.ts";
import { createOpsStore } from "./store.ts";

/** What `GET /` answers: where to look, for someone who found the server by its address. */
const INDEX = {
  name: "stablegate",
  docs: "/docs",
  openapi: "/openapi.json",
  api: "/api/v1",
  health: "/healthz",
  ready: "/readyz",
};

/**
 * `GET /` points at the docs and the health endpoints. Liveness and readiness for supervisors
 * and load balancers: /healthz answers while the process serves HTTP; /readyz checks the store
 * and says `ready` (200) or `not_ready` (503), nothing more. With the metrics token it also
 * reports the settlement chain (`chain`) and every watched chain (`chains`), any of which may be
 * degraded (an unreachable RPC never stops the API, so it does not fail readiness), and the
 * leases this replica holds: a replica without the chain lease is as ready as its holder.
 */
export function opsRoutes(ctx: AppContext, db: Db) {
  const store = createOpsStore(db);
  return new Elysia()
    .get("/", () => INDEX)
    .get("/healthz", () => ({ ok: true }))
    .get("/readyz", async ({ request, set }) => {
      let access: "status" | "details";
      try {
        access = readinessAccess(ctx.config.metricsToken, request.headers.get("authorization"));
      } catch (refusal) {
        const response = errorResponse("UNKNOWN", refusal, ctx.log, request);
        response.headers.set("www-authenticate", 'Bearer realm="metrics"');
        return response;
      }
      const reachable = await store.reachable();
      set.status = reachable ? 200 : 503;
      const status: ReadyStatus = reachable ? "ready" : "not_ready";
      if (access === "status") return { status };
      return {
        status,
        ok: reachable,
        store: reachable ? "ok" : "unavailable",
        chain: await ctx.chain.readiness(),
        chains: ctx.chain.chains(),
        leases: ctx.leases(),
        // Whether email works, read from the store (none while it is unavailable); no user name or password.
        email: reachable ? await ctx.email.health() : null,
      };
    });
}
