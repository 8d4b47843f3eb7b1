import { Elysia } from "elysia";
import type { AppContext } from "../http/context.ts";
import css from "./assets/checkout.css" with { type: "text" };
import { PAGE_HEADERS, checkoutPage, notFoundPage } from "./page.ts";
import { publicPaymentView } from "./public-view.ts";
import { qrSvg } from "./qr.ts";

/** The hosted checkout page and its assets, all embedded in the binary. */
export function pageRoutes(ctx: AppContext) {
  return new Elysia()
    .get("/pay/:id", async ({ params }) => {
      const row = ctx.payments.findPublic(params.id);
      if (!row) return new Response(notFoundPage(), { status: 404, headers: PAGE_HEADERS });
      const view = publicPaymentView(row, ctx.publicExtras(row), ctx.view);
      return new Response(checkoutPage(view, await qrSvg(row.deposit_address)), { headers: PAGE_HEADERS });
    })
    .get("/checkout.css", () => new Response(css, { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=300" } }));
}
