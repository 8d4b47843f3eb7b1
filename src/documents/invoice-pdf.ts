import type { InvoiceData } from "./data.ts";
import { documentDate, type Paper, usdc } from "./format.ts";
import {
  contentWidth,
  documentOpening,
  footer,
  INK,
  label,
  MARGIN,
  MUTED,
  newDocument,
  qr,
  totals,
} from "./pdf-kit.ts";

/**
 * The invoice as a PDF: the merchant, the customer, the number and dates, the items and the
 * amount due, the pay link and its QR code, and once paid, "Paid" with the date and transactions.
 * The same data gives the same bytes.
 */
export async function renderInvoicePdf(data: InvoiceData, paper: Paper = "a4"): Promise<Uint8Array<ArrayBuffer>> {
  const { doc, bytes } = await newDocument({
    paper,
    title: `Invoice ${data.invoiceNumber}`,
    author: data.merchant.name,
    createdAt: data.issuedAt,
    modifiedAt: data.paid?.at ?? data.issuedAt,
  });
  const width = contentWidth(doc);

  const facts: Array<[string, string]> = [
    ["Invoice number", data.invoiceNumber],
    ["Issued", documentDate(data.issuedAt)],
  ];
  if (data.dueAt !== null) facts.push(["Due", documentDate(data.dueAt)]);
  if (data.reference) facts.push(["Reference", data.reference]);
  let y = documentOpening(doc, data, { title: "Invoice", facts, partyLabel: "Bill to" });
  const sums: Array<[string, string]> = [["Total", usdc(data.total)]];
  if (data.total !== data.amountDue) sums.push(["Received", usdc(data.total - data.amountDue)]);
  sums.push(["Amount due", usdc(data.amountDue)]);
  y = totals(doc, sums, y) + 20;

  if (y > doc.page.height - MARGIN - 170) {
    doc.addPage();
    y = MARGIN;
  }
  if (data.paid) paidBlock(doc, data.paid, y, width);
  else payBlock(doc, data, y, width);

  footer(doc, `Payment ${data.paymentId} · Amounts in USDC, a US dollar stablecoin.`);
  doc.end();
  return bytes;
}

function payBlock(doc: PDFKit.PDFDocument, data: InvoiceData, y: number, width: number): void {
  const size = 100;
  qr(doc, data.payUrl, MARGIN + width - size, y, size);
  const textWidth = width - size - 20;
  label(doc, "Pay online", MARGIN, y, textWidth);
  doc
    .font("semibold")
    .fontSize(11)
    .fillColor(INK)
    .text(`Pay ${usdc(data.amountDue)} online`, { width: textWidth });
  doc.moveDown(0.3);
  doc.font("regular").fontSize(9).fillColor(MUTED);
  doc.text("Open the payment link below, or scan the code with a phone to open it.", { width: textWidth });
  // The link gets the whole width, so it stays on one line and can be copied whole.
  doc
    .fillColor("#1d4ed8")
    .fontSize(8)
    .text(data.payUrl, MARGIN, y + size + 8, { width, link: data.payUrl });
}

function paidBlock(doc: PDFKit.PDFDocument, paid: NonNullable<InvoiceData["paid"]>, y: number, width: number): void {
  doc.font("semibold").fontSize(18).fillColor("#047857").text("Paid", MARGIN, y, { width });
  doc.font("regular").fontSize(9.5).fillColor(INK);
  if (paid.at !== null) doc.text(`Paid on ${documentDate(paid.at)}`, { width });
  doc.moveDown(0.4);
  for (const t of paid.transfers) {
    doc
      .fillColor(MUTED)
      .fontSize(8.5)
      .text(`${usdc(t.amount)} on ${t.chain}, transaction`, { width });
    doc
      .fillColor(t.explorerUrl ? "#1d4ed8" : INK)
      .fontSize(8)
      .text(t.txHash, { width, link: t.explorerUrl ?? undefined });
    doc.moveDown(0.3);
  }
}
