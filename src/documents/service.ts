import type { Account } from "../accounts/service.ts";
import { explorerFor } from "../chain/explorer.ts";
import type { EventRow } from "../events/store.ts";
import { NotFoundError } from "../lib/errors.ts";
import { PAYMENT_ID } from "../lib/ids.ts";
import { parseExactAmount } from "../lib/money.ts";
import type { PaymentRow } from "../payments/store.ts";
import type { TransferView } from "../payments/view.ts";
import type { RefundRow } from "../refunds/store.ts";
import type { BusinessService } from "./business.ts";
import {
  type ChainTx,
  type DocumentParts,
  type DocumentRefund,
  type InvoiceData,
  invoiceData,
  type ReceiptData,
  receiptData,
} from "./data.ts";

/** Most refunds a receipt lists; a payment is refunded a few times at most. */
export const REFUNDS_SHOWN = 100;

export interface DocumentsDeps {
  payments: {
    findById(id: string): PaymentRow | null;
    findForAccount(id: string, accountId: string): PaymentRow | null;
  };
  accountName: (accountId: string) => string | null;
  business: Pick<BusinessService, "details">;
  eventsOf: (paymentId: string) => Pick<EventRow, "type" | "created_at">[];
  refundsOf: (accountId: string, paymentId: string) => RefundRow[];
  transfersOf: (row: PaymentRow) => TransferView[];
  baseUrl: string;
  /** The settlement chain, where refunds are paid. */
  chain: { name: string; chainId: number };
}

/**
 * The invoice and the receipt of a payment, as data for the pages and PDFs. The public side finds
 * the payment by its id alone (the id is the capability, as for the checkout); the merchant's
 * side only among the account's own payments.
 */
export function createDocumentsService(d: DocumentsDeps) {
  const txOf = (chain: { name: string; chainId: number }, txHash: string): ChainTx => ({
    chain: chain.name,
    txHash,
    explorerUrl: explorerFor(chain)?.tx(txHash) ?? null,
  });

  function parts(row: PaymentRow): DocumentParts {
    const details = d.business.details(row.account_id);
    const confirmed = d.eventsOf(row.id).find((e) => e.type === "payment.confirmed");
    return {
      merchant: {
        name: details.legalName ?? d.accountName(row.account_id) ?? "",
        addressLines: details.addressLines,
        taxId: details.taxId,
        supportEmail: details.supportEmail,
        logo: details.logo,
        logoPath: details.logoPath,
      },
      payUrl: `${d.baseUrl}/pay/${row.id}`,
      transfers: d
        .transfersOf(row)
        .filter((t) => t.confirmed && !t.reversed)
        .map((t) => ({
          ...txOf({ name: t.chain, chainId: t.chain_id }, t.tx_hash),
          amount: parseExactAmount(t.amount) ?? 0n,
        })),
      confirmedAt: confirmed ? Number(confirmed.created_at) : null,
      confirmed: row.status === "confirmed",
    };
  }

  function refunds(row: PaymentRow): DocumentRefund[] {
    return d
      .refundsOf(row.account_id, row.id)
      .filter((r) => r.status === "succeeded" && r.tx_hash !== null)
      .sort((a, b) => a.seq - b.seq)
      .map((r) => ({ ...txOf(d.chain, r.tx_hash!), amount: r.amount, succeededAt: r.succeeded_at ?? r.updated_at }));
  }

  /** The invoice of a payment with an invoice number; NotFound for any other. */
  function invoiceOf(row: PaymentRow | null, id: string): InvoiceData {
    if (!row || row.invoice_number === null) throw new NotFoundError(`no invoice for payment ${id}`);
    return invoiceData({ ...row, invoice_number: row.invoice_number }, parts(row));
  }

  /** The receipt of a confirmed payment; NotFound before (docs/documents.md: no receipt until then). */
  function receiptOf(row: PaymentRow | null, id: string): ReceiptData {
    if (row?.status !== "confirmed") throw new NotFoundError(`no receipt for payment ${id}`);
    return receiptData(row, parts(row), refunds(row));
  }

  const publicRow = (id: string) => (PAYMENT_ID.test(id) ? d.payments.findById(id) : null);
  const ownRow = (account: Account, id: string) =>
    PAYMENT_ID.test(id) ? d.payments.findForAccount(id, account.id) : null;

  return {
    /** By the payment id alone: the public pages. */
    invoice: (id: string) => invoiceOf(publicRow(id), id),
    receipt: (id: string) => receiptOf(publicRow(id), id),
    /** Among the account's payments only: the merchant API (another account's is NotFound). */
    invoiceForAccount: (account: Account, id: string) => invoiceOf(ownRow(account, id), id),
    receiptForAccount: (account: Account, id: string) => receiptOf(ownRow(account, id), id),
    /** Whether the checkout has documents to link to, without building them. */
    linksFor: (row: Pick<PaymentRow, "invoice_number" | "status">) => ({
      invoice: row.invoice_number !== null,
      receipt: row.status === "confirmed",
    }),
  };
}

export type DocumentsService = ReturnType<typeof createDocumentsService>;
