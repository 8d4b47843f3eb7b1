import { Elysia } from "elysia";
import type { Db } from "../db/index.ts";
import type { AppContext } from "../http/context.ts";

/** What `GET /` answers: where to look, for someone who found the server by its address. */
const INDEX = {
  name: "stablegate",
  docs: 'README.md, section "API reference"',
  api: "/api/v1",
  health: "/healthz",
  ready: "/readyz",
};

/**
 * `GET /` points at the docs and the health endpoints. Liveness and readiness for supervisors
 * and load balancers: /healthz answers while the process serves HTTP; /readyz also checks the store and reports the chain, which may be
 * degraded (an unreachable RPC never stops the API, so it does not fail readiness).
 */
export function opsRoutes(ctx: AppContext, db: Db) {
  const ping = db.query("SELECT 1 AS ok");
  return new Elysia()
    .get("/", () => INDEX)
    .get("/healthz", () => ({ ok: true }))
    .get("/readyz", async ({ set }) => {
      let store = true;
      try {
        ping.get();
      } catch {
        store = false;
      }
      const chain = await ctx.chain.readiness();
      set.status = store ? 200 : 503;
      return { ok: store, store: store ? "ok" : "unavailable", chain };
    });
}
