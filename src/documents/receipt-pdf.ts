import type { ReceiptData } from "./data.ts";
import { documentDate, type Paper, usdc } from "./format.ts";
import {
  contentWidth,
  factsBlock,
  footer,
  INK,
  label,
  MARGIN,
  merchantBlock,
  newDocument,
  table,
  totals,
} from "./pdf-kit.ts";

/**
 * The receipt as a PDF: the merchant, the customer, what was bought, what was received, each
 * transfer with its chain and transaction, and the refunds paid back. The same data gives the
 * same bytes.
 */
export async function renderReceiptPdf(data: ReceiptData, paper: Paper = "a4"): Promise<Uint8Array<ArrayBuffer>> {
  const lastRefund = data.refunds.at(-1)?.succeededAt;
  const { doc, bytes } = await newDocument({
    paper,
    title: `Receipt ${data.invoiceNumber ?? data.paymentId.slice(0, 10)}`,
    author: data.merchant.name,
    createdAt: data.paidAt,
    modifiedAt: lastRefund ?? data.paidAt,
  });
  const width = contentWidth(doc);
  const right = MARGIN + width * 0.55;
  const rightWidth = width * 0.45;

  doc
    .font("semibold")
    .fontSize(22)
    .fillColor(INK)
    .text("Receipt", right, MARGIN, { width: rightWidth, align: "right" });
  const facts: Array<[string, string]> = [["Paid", documentDate(data.paidAt)]];
  if (data.invoiceNumber) facts.push(["Invoice number", data.invoiceNumber]);
  if (data.reference) facts.push(["Reference", data.reference]);
  const factsEnd = factsBlock(doc, facts, right, MARGIN + 34, rightWidth);
  const merchantEnd = merchantBlock(doc, data.merchant, MARGIN, MARGIN, width * 0.5);

  let y = Math.max(factsEnd, merchantEnd) + 24;
  if (data.customer.name || data.customer.email) {
    label(doc, "Received from", MARGIN, y, width / 2);
    doc.font("semibold").fontSize(10.5).fillColor(INK);
    if (data.customer.name) doc.text(data.customer.name, { width: width / 2 });
    doc.font("regular").fontSize(9.5);
    if (data.customer.email) doc.text(data.customer.email, { width: width / 2 });
    y = doc.y + 18;
  }
  if (data.description) {
    doc.font("regular").fontSize(10).fillColor(INK).text(data.description, MARGIN, y, { width });
    y = doc.y + 14;
  }

  y = table(
    doc,
    [
      { title: "Description", width: 52 },
      { title: "Qty", width: 8, align: "right" },
      { title: "Unit price", width: 20, align: "right" },
      { title: "Amount", width: 20, align: "right" },
    ],
    data.lines.map((line) => [
      { text: line.description },
      { text: String(line.quantity) },
      { text: usdc(line.unitAmount) },
      { text: usdc(line.amount) },
    ]),
    y,
  );
  const sums: Array<[string, string]> = [
    ["Total", usdc(data.total)],
    ["Amount paid", usdc(data.amountReceived)],
  ];
  // Refunds come off what was paid: the last line is what the customer paid in the end.
  if (data.amountRefunded > 0n)
    sums.push(
      ["Refunded", `-${usdc(data.amountRefunded)}`],
      ["Net paid", usdc(data.amountReceived - data.amountRefunded)],
    );
  y = totals(doc, sums, y) + 22;

  label(doc, "Transfers", MARGIN, y, width);
  y = table(
    doc,
    [
      { title: "Chain", width: 14 },
      { title: "Amount", width: 16, align: "right" },
      { title: "Transaction", width: 70 },
    ],
    data.transfers.map((t) => [
      { text: t.chain },
      { text: usdc(t.amount) },
      { text: t.txHash, link: t.explorerUrl ?? undefined, small: true },
    ]),
    doc.y + 4,
  );

  if (data.refunds.length > 0) {
    label(doc, "Refunds", MARGIN, y + 18, width);
    table(
      doc,
      [
        { title: "Date", width: 20 },
        { title: "Amount", width: 14, align: "right" },
        { title: "Transaction", width: 66 },
      ],
      data.refunds.map((r) => [
        { text: documentDate(r.succeededAt) },
        { text: usdc(r.amount) },
        { text: r.txHash, link: r.explorerUrl ?? undefined, small: true },
      ]),
      doc.y + 4,
    );
  }

  footer(doc, `Payment ${data.paymentId} · Amounts in USDC, a US dollar stablecoin.`);
  doc.end();
  return bytes;
}
