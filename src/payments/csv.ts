import { isoMillis } from "../lib/clock.ts";
import { formatAmount, formatExact } from "../lib/money.ts";
import type { ExportPayment } from "./search-store.ts";

/**
 * The payments export as CSV (RFC 4180: comma-separated, CRLF line ends, a field quoted when it
 * holds a comma, quote, CR or LF, with quotes doubled). A spreadsheet runs a cell that starts with
 * = + - @ (or a tab or CR, which some strip first) as a formula, so such text gets a leading
 * apostrophe: the export never carries a formula from a payer or merchant field into Excel.
 */
export const CSV_COLUMNS = [
  "id",
  "created_at",
  "status",
  "amount",
  "amount_received",
  "fee",
  "net",
  "currency",
  "reference",
  "invoice_number",
  "description",
  "customer_email",
  "payment_link",
  "transfer_tx_hashes",
  "settlement_tx_hash",
  "amount_refunded",
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One field, neutralised and quoted as needed. */
export function csvField(value: string | null): string {
  if (value === null || value === "") return "";
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: Array<string | null>): string {
  return `${values.map(csvField).join(",")}\r\n`;
}

/**
 * A payment as an export line. Amounts are USDC decimals: amount as asked, amount_received
 * exactly (empty while nothing arrived); fee and net are what settlements have taken and paid out
 * so far (0.00 before the first one), so fee + net = settled. amount_refunded is what succeeded
 * refunds paid back (last, so the columns before it keep their places).
 */
export function paymentCsvLine(row: ExportPayment): string {
  // Ids, times, statuses, amounts and hashes are ours and never need quoting or neutralising;
  // only the merchant's and payer's text goes through csvField.
  const received = row.amount_received === null ? "" : formatExact(row.amount_received);
  return (
    `${row.id},${isoMillis(row.created_at)},${row.status},${formatAmount(row.amount)},${received},` +
    `${formatExact(row.fee_settled)},${formatExact(row.amount_settled - row.fee_settled)},USDC,` +
    `${csvField(row.reference)},${csvField(row.invoice_number)},${csvField(row.description)},` +
    `${csvField(row.customer_email)},${row.payment_link ?? ""},` +
    `${row.transfer_hashes ?? ""},${row.settlement_hashes ?? ""},${formatExact(row.amount_refunded)}\r\n`
  );
}

/**
 * The export as a byte stream that reads the next batch of rows only when the client is ready
 * for more, so memory stays flat however many rows there are: at most a batch or two is held,
 * even while a slow download waits.
 */
export function paymentsCsvStream(batches: AsyncIterator<ExportPayment[]>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = "";
      if (!started) {
        started = true;
        text = csvLine([...CSV_COLUMNS]);
      }
      const next = await batches.next();
      if (next.done) {
        if (text) controller.enqueue(encoder.encode(text));
        controller.close();
        return;
      }
      for (const row of next.value) text += paymentCsvLine(row);
      controller.enqueue(encoder.encode(text));
    },
    async cancel() {
      await batches.return?.(undefined);
    },
  });
}

/** The download's file name: the day it was made, UTC. */
export const csvFileName = (now: number): string => `payments-${isoMillis(now).slice(0, 10)}.csv`;
