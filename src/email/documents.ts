import type { Documents } from "../documents/index.ts";
import { renderInvoicePdf, renderReceiptPdf } from "../documents/index.ts";
import { invoiceName, pdfFileName, receiptName } from "../documents/pdf-response.ts";
import type { EmailDocuments } from "./index.ts";

/**
 * What emails take from the merchant's documents (docs/documents.md): the merchant's legal name
 * as the sender and the support address as Reply-To, and the invoice or receipt PDF attached to
 * the email that announces it, rendered when the email is sent.
 */
export function documentsForEmail(d: Documents, accountName: (accountId: string) => string | null): EmailDocuments {
  const pdf = (name: string, content: Uint8Array) => [
    { filename: pdfFileName(name), contentType: "application/pdf", content },
  ];
  return {
    senderOf(accountId) {
      const details = d.business.details(accountId);
      return { name: details.legalName ?? accountName(accountId) ?? "Stablegate", replyTo: details.supportEmail };
    },
    async attachmentsFor(paymentId, kind) {
      if (kind === "invoice") {
        const data = d.documents.invoice(paymentId);
        return pdf(invoiceName(data), await renderInvoicePdf(data));
      }
      if (kind === "receipt") {
        const data = d.documents.receipt(paymentId);
        return pdf(receiptName(data), await renderReceiptPdf(data));
      }
      return [];
    },
  };
}
