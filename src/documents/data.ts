import type { StoredLineItem } from "../payments/view.ts";
import type { BusinessDetails } from "./business.ts";

/**
 * What an invoice or a receipt shows, built by one function per document from the stores' rows.
 * Renderers (the HTML pages, the PDFs, later the emails) read only this: nothing in it is
 * private beyond what the payer sees at checkout and their own name and email. Amounts are
 * micro-USDC; times are epoch milliseconds.
 */
export interface DocumentMerchant {
  /** The legal name where set, else the account's name. */
  name: string;
  addressLines: string[];
  taxId: string | null;
  supportEmail: string | null;
  logo: BusinessDetails["logo"];
  logoPath: string | null;
}

export interface DocumentLine {
  description: string;
  quantity: number;
  unitAmount: bigint;
  amount: bigint;
}

/** A transfer on a chain, with its explorer page where the chain has a public explorer. */
export interface ChainTx {
  chain: string;
  txHash: string;
  explorerUrl: string | null;
}

export interface DocumentTransfer extends ChainTx {
  amount: bigint;
}

export interface DocumentRefund extends ChainTx {
  amount: bigint;
  succeededAt: number;
}

export interface DocumentCommon {
  paymentId: string;
  merchant: DocumentMerchant;
  customer: { name: string | null; email: string | null };
  description: string | null;
  reference: string | null;
  invoiceNumber: string | null;
  /** The items, or one line for the amount when the payment has none. */
  lines: DocumentLine[];
  total: bigint;
  payUrl: string;
}

export interface InvoiceData extends DocumentCommon {
  invoiceNumber: string;
  issuedAt: number;
  dueAt: number | null;
  /** What is still to pay (the total less what was received). */
  amountDue: bigint;
  /** Once confirmed: when, and the transfers that paid it. */
  paid: { at: number | null; transfers: DocumentTransfer[] } | null;
}

export interface ReceiptData extends DocumentCommon {
  /** When the payment was confirmed (its payment.confirmed event), else when it was created. */
  paidAt: number;
  createdAt: number;
  amountReceived: bigint;
  transfers: DocumentTransfer[];
  /** Succeeded refunds only, oldest first. */
  refunds: DocumentRefund[];
  amountRefunded: bigint;
}

/** The payment's fields a document reads: none of metadata, fee, payout or account. */
export interface DocumentPayment {
  id: string;
  amount: bigint;
  amount_received: bigint | null;
  amount_refunded: bigint;
  description: string | null;
  reference: string | null;
  customer_name: string | null;
  customer_email: string | null;
  invoice_number: string | null;
  due_at: number | null;
  line_items: string | null;
  created_at: number;
}

/** What the service gathers beside the payment row for either document. */
export interface DocumentParts {
  merchant: DocumentMerchant;
  payUrl: string;
  /** Credited transfers still on chain. */
  transfers: DocumentTransfer[];
  /** The payment.confirmed event's time; null while not confirmed (or its event was purged). */
  confirmedAt: number | null;
  confirmed: boolean;
}

export function invoiceData(row: DocumentPayment & { invoice_number: string }, parts: DocumentParts): InvoiceData {
  const received = row.amount_received ?? 0n;
  return {
    ...common(row, parts),
    invoiceNumber: row.invoice_number,
    issuedAt: row.created_at,
    dueAt: row.due_at,
    amountDue: row.amount > received ? row.amount - received : 0n,
    paid: parts.confirmed ? { at: parts.confirmedAt, transfers: parts.transfers } : null,
  };
}

export function receiptData(row: DocumentPayment, parts: DocumentParts, refunds: DocumentRefund[]): ReceiptData {
  return {
    ...common(row, parts),
    paidAt: parts.confirmedAt ?? row.created_at,
    createdAt: row.created_at,
    amountReceived: row.amount_received ?? 0n,
    transfers: parts.transfers,
    refunds,
    amountRefunded: row.amount_refunded,
  };
}

function common(row: DocumentPayment, parts: DocumentParts): DocumentCommon {
  return {
    paymentId: row.id,
    merchant: parts.merchant,
    customer: { name: row.customer_name, email: row.customer_email },
    description: row.description,
    reference: row.reference,
    invoiceNumber: row.invoice_number,
    lines: linesOf(row),
    total: row.amount,
    payUrl: parts.payUrl,
  };
}

function linesOf(row: DocumentPayment): DocumentLine[] {
  if (!row.line_items)
    return [{ description: row.description ?? "Payment", quantity: 1, unitAmount: row.amount, amount: row.amount }];
  return (JSON.parse(row.line_items) as StoredLineItem[]).map((item) => ({
    description: item.description,
    quantity: item.quantity,
    unitAmount: BigInt(item.unit_amount),
    amount: BigInt(item.unit_amount) * BigInt(item.quantity),
  }));
}
