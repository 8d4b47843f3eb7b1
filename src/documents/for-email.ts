import type { BusinessService } from "./business.ts";
import { renderInvoicePdf } from "./invoice-pdf.ts";
import { invoiceName, pdfFileName, receiptName } from "./pdf-response.ts";
import { renderReceiptPdf } from "./receipt-pdf.ts";
import type { DocumentsService } from "./service.ts";

/**
 * What emails take from the merchant's documents (src/email/: EmailDocuments): the merchant's legal name
 * as the sender and the support address as Reply-To, and the invoice or receipt PDF attached to
 * the email that announces it, rendered when the email is sent.
 */
export function documentsForEmail(
  d: { business: Pick<BusinessService, "details">; documents: Pick<DocumentsService, "invoice" | "receipt"> },
  accountName: (accountId: string) => Promise<string | null>,
) {
  const pdf = (name: string, content: Uint8Array) => [
    { filename: pdfFileName(name), contentType: "application/pdf", content },
  ];
  return {
    async senderOf(accountId: string): Promise<{ name: string; replyTo: string | null }> {
      const details = await d.business.details(accountId);
      return {
        name: details.legalName ?? (await accountName(accountId)) ?? "Stablegate",
        replyTo: details.supportEmail,
      };
    },
    /** `kind`: the email's (src/email/): the invoice and receipt emails carry their PDF. */
    async attachmentsFor(paymentId: string, kind: string) {
      if (kind === "invoice") {
        const data = await d.documents.invoice(paymentId);
        return pdf(invoiceName(data), await renderInvoicePdf(data));
      }
      if (kind === "receipt") {
        const data = await d.documents.receipt(paymentId);
        return pdf(receiptName(data), await renderReceiptPdf(data));
      }
      return [];
    },
  };
}
