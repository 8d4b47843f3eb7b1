import type { ReceiptData } from "./data.ts";
import { documentDate, type Paper, usdc } from "./format.ts";
import { contentWidth, documentOpening, footer, label, MARGIN, newDocument, table, totals } from "./pdf-kit.ts";

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

  const facts: Array<[string, string]> = [["Paid", documentDate(data.paidAt)]];
  if (data.invoiceNumber) facts.push(["Invoice number", data.invoiceNumber]);
  if (data.reference) facts.push(["Reference", data.reference]);
  let y = documentOpening(doc, data, { title: "Receipt", facts, partyLabel: "Received from" });
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
