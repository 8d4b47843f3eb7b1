import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { decoded, oneOfParam } from "../http/query.ts";
import { PaymentParams } from "../payments/routes.ts";
import { renderInvoicePdf } from "./invoice-pdf.ts";
import { invoiceName, pdfResponse, receiptName } from "./pdf-response.ts";
import { renderReceiptPdf } from "./receipt-pdf.ts";

export const DocumentQuery = Type.Object({ paper: Type.Optional(oneOfParam("paper", ["a4", "letter"] as const)) });

/** The merchant's copies of the public documents: the same PDFs, found among the account's payments only. */
export function documentRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { documents } = ctx;
  return new Elysia()
    .use(authed)
    .get(
      "/api/v1/payments/:id/invoice.pdf",
      async ({ account, params, query }) => {
        const data = await documents.invoiceForAccount(account, params.id);
        const paper = decoded(DocumentQuery, query).paper ?? "a4";
        return pdfResponse(await renderInvoicePdf(data, paper), invoiceName(data));
      },
      { params: PaymentParams, query: DocumentQuery },
    )
    .get(
      "/api/v1/payments/:id/receipt.pdf",
      async ({ account, params, query }) => {
        const data = await documents.receiptForAccount(account, params.id);
        const paper = decoded(DocumentQuery, query).paper ?? "a4";
        return pdfResponse(await renderReceiptPdf(data, paper), receiptName(data));
      },
      { params: PaymentParams, query: DocumentQuery },
    );
}
