import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { openApiDocument } from "./document.ts";

/** `GET /openapi.json`: the API's OpenAPI 3.1 document, for client generators and the docs page. */
export function openApiRoutes(ctx: AppContext) {
  const body = JSON.stringify(openApiDocument(ctx.view.baseUrl));
  return new Elysia().get(
    "/openapi.json",
    () =>
      new Response(body, {
        headers: {
          "content-type": "application/json",
          // Tools fetch it from anywhere (an editor, a generator in a browser); it holds nothing private.
          "access-control-allow-origin": "*",
          "cache-control": "public, max-age=300",
        },
      }),
  );
}
