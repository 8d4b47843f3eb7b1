import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { assetResponse } from "../html/assets.ts";
import { qrSvg } from "../html/qr.ts";
import { html } from "../html/template.ts";
import { NotFoundError } from "../lib/errors.ts";
import { READ_LIMIT } from "../rate-limits/index.ts";
import { DOCUMENT_ASSETS } from "./assets.ts";
import { paperFrom } from "./format.ts";
import { invoicePage } from "./invoice-page.ts";
import { renderInvoicePdf } from "./invoice-pdf.ts";
import { DOCUMENT_HEADERS, documentPage } from "./page-frame.ts";
import { invoiceName, pdfResponse, receiptName } from "./pdf-response.ts";
import { receiptPage } from "./receipt-page.ts";
import { renderReceiptPdf } from "./receipt-pdf.ts";

/**
 * The public documents, keyed by the payment id as the checkout is (docs/documents.md): the
 * invoice and receipt pages, their PDFs, the logos they show and their stylesheet.
 */
export function documentPageRoutes(ctx: AppContext) {
  const { documents, business } = ctx;
  /** The document, or null when the payment has none (unknown, no invoice number, not confirmed). */
  const find = async <T>(id: string, build: (id: string) => Promise<T>): Promise<T | null> => {
    try {
      const data = await build(id);
      await ctx.rateLimiter.take(`read:${id}`, READ_LIMIT);
      return data;
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  };
  const missing = async (what: "invoice" | "receipt", id: string) =>
    new Response(what === "invoice" ? noInvoicePage() : noReceiptPage((await ctx.payments.findPublic(id)) !== null), {
      status: 404,
      headers: DOCUMENT_HEADERS,
    });
  const paperOf = (request: Request) => paperFrom(new URL(request.url).searchParams.get("paper"));
  const badPaper = () =>
    Response.json({ error: "paper must be a4 or letter" }, { status: 400, headers: { "cache-control": "no-store" } });

  const app = new Elysia()
    .get("/pay/:id/invoice", async ({ params }) => {
      const data = await find(params.id, documents.invoice);
      if (!data) return missing("invoice", params.id);
      return new Response(invoicePage(data, data.paid ? "" : await qrSvg(data.payUrl)), { headers: DOCUMENT_HEADERS });
    })
    .get("/pay/:id/invoice.pdf", async ({ params, request }) => {
      const paper = paperOf(request);
      if (!paper) return badPaper();
      const data = await find(params.id, documents.invoice);
      if (!data) return Response.json({ error: `no invoice for payment ${params.id}` }, { status: 404 });
      return pdfResponse(await renderInvoicePdf(data, paper), invoiceName(data));
    })
    .get("/pay/:id/receipt", async ({ params }) => {
      const data = await find(params.id, documents.receipt);
      if (!data) return missing("receipt", params.id);
      return new Response(receiptPage(data), { headers: DOCUMENT_HEADERS });
    })
    .get("/pay/:id/receipt.pdf", async ({ params, request }) => {
      const paper = paperOf(request);
      if (!paper) return badPaper();
      const data = await find(params.id, documents.receipt);
      if (!data) return Response.json({ error: `no receipt for payment ${params.id}` }, { status: 404 });
      return pdfResponse(await renderReceiptPdf(data, paper), receiptName(data));
    })
    .get("/logos/:name", async ({ params }) => {
      const logo = await business.logo(params.name);
      if (!logo) return Response.json({ error: "no such logo" }, { status: 404 });
      // Named by its content's hash: a new logo is a new name, so this one never changes.
      return new Response(logo.bytes, {
        headers: {
          "content-type": logo.type,
          "x-content-type-options": "nosniff",
          "cache-control": "public, max-age=31536000, immutable",
          "content-security-policy": "default-src 'none'; sandbox",
          "cross-origin-resource-policy": "same-origin",
        },
      });
    });
  app.get(DOCUMENT_ASSETS.css.path, ({ request }) => assetResponse(DOCUMENT_ASSETS.css, request));
  return app;
}

/** A page that only says why there is no document here. */
function messagePage(title: string, text: string): string {
  return documentPage(title, html`<h1>${title}</h1>\n<p>${text}</p>`, html``, "");
}

function noInvoicePage(): string {
  return messagePage(
    "Invoice not found",
    "There is no invoice at this address. Check that you copied the whole link, or ask the merchant for it.",
  );
}

/** Unknown payment, or one not confirmed yet: the receipt comes once it is (docs/documents.md). */
function noReceiptPage(known: boolean): string {
  return known
    ? messagePage(
        "No receipt yet",
        "A receipt is issued once the payment is confirmed. If you have just paid, the payment page " +
          "shows how far it is.",
      )
    : messagePage(
        "Receipt not found",
        "There is no payment at this address. Check that you copied the whole link, or ask the merchant for it.",
      );
}
