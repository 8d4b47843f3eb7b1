import { Elysia } from "elysia";
import type { AuthPlugin } from "../http/auth.ts";
import { type AppContext, jsonResponse } from "../http/context.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import { parseLimit } from "../lib/pagination.ts";
import { RETENTION_MS } from "../ops/retention.ts";

export function eventRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { events, clock } = ctx;
  return new Elysia()
    .use(authed)
    // The last 30 days, a reconciliation aid beside webhooks; older events are purged once no
    // delivery refers to them (src/ops/retention.ts).
    .get("/api/v1/events", ({ account, request }) => {
      const query = new URL(request.url).searchParams;
      const limit = parseLimit(query.get("limit"));
      const startingAfter = query.get("starting_after");
      let beforeSeq: number | null = null;
      if (startingAfter !== null) {
        const cursor = events.findForAccount(startingAfter, account.id);
        if (!cursor) throw new ValidationError(`starting_after: no event ${startingAfter}`);
        beforeSeq = cursor.seq;
      }
      const rows = events.list({ accountId: account.id, since: clock.now() - RETENTION_MS, beforeSeq, type: query.get("type"), limit });
      const data = rows.slice(0, limit).map((row) => row.payload);
      return jsonResponse(200, `{"object":"list","data":[${data.join(",")}],"has_more":${rows.length > limit}}`);
    })
    .get("/api/v1/events/:id", ({ account, params }) => {
      const row = events.findForAccount(params.id, account.id);
      if (!row) throw new NotFoundError(`no event ${params.id}`);
      return jsonResponse(200, row.payload);
    });
}
