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
    findById(id: string): Promise<PaymentRow | null>;
    findForAccount(id: string, accountId: string): Promise<PaymentRow | null>;
  };
  accountName: (accountId: string) => Promise<string | null>;
  business: Pick<BusinessService, "details">;
  eventsOf: (paymentId: string) => Promise<Pick<EventRow, "type" | "created_at">[]>;
  refundsOf: (accountId: string, paymentId: string) => Promise<RefundRow[]>;
  transfersOf: (row: PaymentRow) => Promise<TransferView[]>;
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

  async function parts(row: PaymentRow): Promise<DocumentParts> {
    const details = await d.business.details(row.account_id);
    const confirmed = (await d.eventsOf(row.id)).find((e) => e.type === "payment.confirmed");
    const transfers = await d.transfersOf(row);
    return {
      merchant: {
        name: details.legalName ?? (await d.accountName(row.account_id)) ?? "",
        addressLines: details.addressLines,
        taxId: details.taxId,
        supportEmail: details.supportEmail,
        logo: details.logo,
        logoPath: details.logoPath,
      },
      payUrl: `${d.baseUrl}/pay/${row.id}`,
      transfers: transfers
        .filter((t) => t.confirmed && !t.reversed)
        .map((t) => ({
          ...txOf({ name: t.chain, chainId: t.chain_id }, t.tx_hash),
          amount: parseExactAmount(t.amount) ?? 0n,
        })),
      confirmedAt: confirmed ? Number(confirmed.created_at) : null,
      confirmed: row.status === "confirmed",
    };
  }

  async function refunds(row: PaymentRow): Promise<DocumentRefund[]> {
    return (await d.refundsOf(row.account_id, row.id))
      .filter((r) => r.status === "succeeded" && r.tx_hash !== null)
      .sort((a, b) => a.seq - b.seq)
      .map((r) => ({ ...txOf(d.chain, r.tx_hash!), amount: r.amount, succeededAt: r.succeeded_at ?? r.updated_at }));
  }

  /** The invoice of a payment with an invoice number; NotFound for any other. */
  async function invoiceOf(row: PaymentRow | null, id: string): Promise<InvoiceData> {
    if (!row || row.invoice_number === null) throw new NotFoundError(`no invoice for payment ${id}`);
    return invoiceData({ ...row, invoice_number: row.invoice_number }, await parts(row));
  }

  /** The receipt of a confirmed payment; NotFound before (docs/documents.md: no receipt until then). */
  async function receiptOf(row: PaymentRow | null, id: string): Promise<ReceiptData> {
    if (row?.status !== "confirmed") throw new NotFoundError(`no receipt for payment ${id}`);
    return receiptData(row, await parts(row), await refunds(row));
  }

  const publicRow = async (id: string) => (PAYMENT_ID.test(id) ? await d.payments.findById(id) : null);
  const ownRow = async (account: Account, id: string) =>
    PAYMENT_ID.test(id) ? await d.payments.findForAccount(id, account.id) : null;

  return {
    /** By the payment id alone: the public pages. */
    invoice: async (id: string) => invoiceOf(await publicRow(id), id),
    receipt: async (id: string) => receiptOf(await publicRow(id), id),
    /** Among the account's payments only: the merchant API (another account's is NotFound). */
    invoiceForAccount: async (account: Account, id: string) => invoiceOf(await ownRow(account, id), id),
    receiptForAccount: async (account: Account, id: string) => receiptOf(await ownRow(account, id), id),
    /** Whether the checkout has documents to link to, without building them. */
    linksFor: (row: Pick<PaymentRow, "invoice_number" | "status">) => ({
      invoice: row.invoice_number !== null,
      receipt: row.status === "confirmed",
    }),
  };
}

export type DocumentsService = ReturnType<typeof createDocumentsService>;
