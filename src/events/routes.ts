import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { jsonResponse, listJson } from "../http/json.ts";
import { idParam } from "../http/params.ts";
import { DEFAULT_LIMIT, decoded, listQuery, oneOfParam } from "../http/query.ts";
import { ValidationError } from "../lib/errors.ts";
import { prefixedIdPattern } from "../lib/ids.ts";
import { EVENT_TYPES } from "./service.ts";
import { eventStream } from "./sse.ts";

export const ListEventsQuery = listQuery(
  { pattern: prefixedIdPattern("evt"), what: "an event" },
  { type: Type.Optional(oneOfParam("type", EVENT_TYPES)) },
);

const EVENT_ID = new RegExp(prefixedIdPattern("evt"));

export const StreamQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: prefixedIdPattern("evt"), error: "after must be the id of an event" })),
  },
  { additionalProperties: true },
);

export const EventParams = Type.Object({ id: idParam("id", prefixedIdPattern("evt"), (id) => `no event ${id}`) });

export function eventRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { events } = ctx;
  return new Elysia()
    .use(authed)
    .get(
      "/api/v1/events",
      async ({ account, query: text }) => {
        const query = decoded(ListEventsQuery, text);
        const { payloads, hasMore } = await events.list(account, {
          limit: query.limit ?? DEFAULT_LIMIT,
          startingAfter: query.starting_after,
          type: query.type,
        });
        return jsonResponse(200, listJson(payloads, hasMore));
      },
      { query: ListEventsQuery },
    )
    .get(
      "/api/v1/events/stream",
      async ({ account, query, request }) => {
        // `after` for clients that cannot set headers; EventSource resends Last-Event-ID itself.
        const header = request.headers.get("last-event-id");
        if (query.after === undefined && header !== null && !EVENT_ID.test(header))
          throw new ValidationError("Last-Event-ID must be the id of an event");
        const after = query.after ?? header ?? undefined;
        const cursor = await events.streamCursor(account, after, query.after !== undefined ? "after" : "Last-Event-ID");
        // Merchant routes are reached with a key only, so the account always names one.
        const keyId = account.keyId!;
        const body = eventStream({
          events,
          feed: ctx.eventFeed,
          account,
          keyId,
          keyIsLive: () => ctx.accounts.keyIsLive(keyId),
          cursor,
          signal: request.signal,
        });
        return new Response(body, {
          headers: {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            // nginx buffers responses unless told not to; a buffered stream delivers nothing.
            "x-accel-buffering": "no",
          },
        });
      },
      { query: StreamQuery },
    )
    .get(
      "/api/v1/events/:id",
      async ({ account, params }) => jsonResponse(200, await events.retrieve(account, params.id)),
      { params: EventParams },
    );
}
