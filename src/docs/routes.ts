import { Elysia } from "elysia";
import { assetResponse } from "../html/assets.ts";
import { pageHeaders } from "../html/headers.ts";
import { DOCS_ASSETS } from "./assets.ts";
import { docsPage } from "./page.ts";

// The docs post no form and are never framed (their "Authorize" box takes an API key).
const HEADERS = pageHeaders("'none'", "never");

/** `GET /docs`: the API reference, rendered in the browser from /openapi.json; its files are in the binary. */
export function docsRoutes() {
  const page = docsPage();
  const app = new Elysia().get("/docs", () => new Response(page, { headers: HEADERS }));
  for (const asset of Object.values(DOCS_ASSETS)) app.get(asset.path, ({ request }) => assetResponse(asset, request));
  return app;
}
