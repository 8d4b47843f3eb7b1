import { isoMillis } from "../lib/clock.ts";
import { formatExact } from "../lib/money.ts";
import { csvField, csvLine } from "../payments/csv.ts";
import type { RefundRow } from "./store.ts";

/**
 * The refunds export, with the payments export's conventions (src/payments/csv.ts): RFC 4180,
 * CRLF, and the merchant's text (the reason) neutralised against spreadsheet formulas. The claim
 * link is left out: it is the payer's capability, not a record to pass around in a spreadsheet.
 */
export const REFUND_CSV_COLUMNS = [
  "id",
  "payment",
  "created_at",
  "status",
  "amount",
  "currency",
  "refund_address",
  "tx_hash",
  "block_number",
  "reason",
  "payable_at",
  "succeeded_at",
  "canceled_at",
] as const;

const time = (ms: number | null) => (ms === null ? "" : isoMillis(ms));

/** A refund as an export line; amounts are exact USDC decimals, times ISO 8601 UTC. */
export function refundCsvLine(row: RefundRow): string {
  // Ids, statuses, addresses and hashes are ours and never need quoting; the reason goes through csvField.
  return (
    `${row.id},${row.payment_id},${isoMillis(row.created_at)},${row.status},${formatExact(row.amount)},USDC,` +
    `${row.refund_address ?? ""},${row.tx_hash ?? ""},${row.block_number ?? ""},${csvField(row.reason)},` +
    `${time(row.payable_at)},${time(row.succeeded_at)},${time(row.canceled_at)}\r\n`
  );
}

/** The export as a byte stream that reads the next batch only when the client is ready for it. */
export function refundsCsvStream(batches: AsyncIterator<RefundRow[]>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = started ? "" : csvLine([...REFUND_CSV_COLUMNS]);
      started = true;
      const next = await batches.next();
      if (next.done) {
        if (text) controller.enqueue(encoder.encode(text));
        controller.close();
        return;
      }
      for (const row of next.value) text += refundCsvLine(row);
      controller.enqueue(encoder.encode(text));
    },
    async cancel() {
      await batches.return?.(undefined);
    },
  });
}

/** The download's file name: the day it was made, UTC. */
export const refundsCsvFileName = (now: number): string => `refunds-${isoMillis(now).slice(0, 10)}.csv`;
