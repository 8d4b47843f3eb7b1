import { DocumentQuery } from "../documents/routes.ts";
import { PaymentParams } from "../payments/routes.ts";
import type { Operation } from "./operation.ts";

/** The merchant's copies of a payment's invoice and receipt (docs/documents.md), as PDF files. */
export const DOCUMENT_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v1/payments/:id/invoice.pdf",
    operationId: "retrievePaymentInvoicePdf",
    tag: "Payments",
    summary: "Download a payment's invoice as PDF",
    description:
      "The same file as the payer's `{base}/pay/{id}/invoice.pdf`, for a payment created with `invoice_number` " +
      "(404 for any other). `paper` is `a4` (the default) or `letter`. The same payment gives the same bytes.",
    auth: true,
    params: PaymentParams,
    query: DocumentQuery,
    responses: { 200: { description: "The invoice.", mediaType: "application/pdf" } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/api/v1/payments/:id/receipt.pdf",
    operationId: "retrievePaymentReceiptPdf",
    tag: "Payments",
    summary: "Download a payment's receipt as PDF",
    description:
      "The same file as the payer's `{base}/pay/{id}/receipt.pdf`: what was paid, the transfers with their " +
      "transaction hashes, and succeeded refunds. Only for a `confirmed` payment (404 before).",
    auth: true,
    params: PaymentParams,
    query: DocumentQuery,
    responses: { 200: { description: "The receipt.", mediaType: "application/pdf" } },
    errors: [400, 404],
  },
];
