import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AuthPlugin } from "../http/auth.ts";
import { type AppContext, jsonResponse, listJson } from "../http/context.ts";
import { idParam } from "../http/params.ts";
import { DEFAULT_LIMIT, decoded, listQuery, oneOfParam } from "../http/query.ts";
import { prefixedIdPattern } from "../lib/ids.ts";
import { EVENT_TYPES } from "./service.ts";

const ListEventsQuery = listQuery(
  { pattern: prefixedIdPattern("evt"), what: "an event" },
  { type: Type.Optional(oneOfParam("type", EVENT_TYPES)) },
);

const EventParams = Type.Object({ id: idParam("id", prefixedIdPattern("evt"), (id) => `no event ${id}`) });

export function eventRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { events } = ctx;
  return new Elysia()
    .use(authed)
    .get(
      "/api/v1/events",
      ({ account, query: text }) => {
        const query = decoded(ListEventsQuery, text);
        const { payloads, hasMore } = events.list(account, {
          limit: query.limit ?? DEFAULT_LIMIT,
          startingAfter: query.starting_after,
          type: query.type,
        });
        return jsonResponse(200, listJson(payloads, hasMore));
      },
      { query: ListEventsQuery },
    )
    .get("/api/v1/events/:id", ({ account, params }) => jsonResponse(200, events.retrieve(account, params.id)), {
      params: EventParams,
    });
}
