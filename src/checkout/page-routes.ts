import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { assetResponse } from "../html/assets.ts";
import { qrSvg } from "../html/qr.ts";
import { READ_LIMIT } from "../rate-limits/index.ts";
import { ASSETS } from "./assets.ts";
import { checkoutPage, notFoundPage, PAGE_HEADERS, pageQrTexts } from "./page.ts";
import { publicPaymentView } from "./public-view.ts";

/** The hosted checkout page, its assets and the merchant widget, all embedded in the binary. */
export function pageRoutes(ctx: AppContext) {
  const app = new Elysia().get("/pay/:id", async ({ params, request }) => {
    const row = await ctx.payments.findPublic(params.id);
    if (!row) return new Response(notFoundPage(), { status: 404, headers: PAGE_HEADERS });
    await ctx.rateLimiter.take(`read:${row.id}`, READ_LIMIT);
    const query = new URL(request.url).searchParams;
    const view = publicPaymentView(row, await ctx.publicExtras(row), ctx.view);
    const page = checkoutPage(view, {
      qrSvgs: await Promise.all(pageQrTexts(view).map(qrSvg)),
      embed: query.get("embed") === "1",
      parentOrigin: webOrigin(query.get("origin")),
    });
    return new Response(page, { headers: PAGE_HEADERS });
  });
  for (const asset of Object.values(ASSETS)) app.get(asset.path, ({ request }) => assetResponse(asset, request));
  return app;
}

/** An http(s) origin exactly as a browser writes it ("https://shop.example"), else null. */
function webOrigin(text: string | null): string | null {
  if (!text) return null;
  try {
    const url = new URL(text);
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === text ? text : null;
  } catch {
    return null;
  }
}
