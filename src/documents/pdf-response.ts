import type { InvoiceData, ReceiptData } from "./data.ts";

/** `name`.pdf with only safe characters kept: the name is made of an invoice number or an id. */
export const pdfFileName = (name: string) => `${name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 80)}.pdf`;

/** What each document's PDF is called, wherever it is served or sent. */
export const invoiceName = (data: Pick<InvoiceData, "invoiceNumber">) => `invoice-${data.invoiceNumber}`;
export const receiptName = (data: Pick<ReceiptData, "invoiceNumber" | "paymentId">) =>
  `receipt-${data.invoiceNumber ?? data.paymentId.slice(2, 12)}`;

/** A PDF as a download named `name`.pdf. */
export function pdfResponse(bytes: Uint8Array<ArrayBuffer>, name: string): Response {
  return new Response(bytes, {
    headers: {
      "content-type": "application/pdf",
      "content-disposition": `inline; filename="${pdfFileName(name)}"`,
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    },
  });
}
