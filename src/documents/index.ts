import type { AccountsService } from "../accounts/service.ts";
import type { EventStore } from "../events/store.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import type { PaymentsConfig } from "../payments/index.ts";
import type { Lifecycle } from "../payments/lifecycle.ts";
import type { PaymentStore } from "../payments/store.ts";
import { createRefundStore } from "../refunds/store.ts";
import { createBusinessService } from "./business.ts";
import { documentsForEmail } from "./for-email.ts";
import { createDocumentsService, REFUNDS_SHOWN } from "./service.ts";
import { createBusinessStore } from "./store.ts";

export type { InvoiceData, ReceiptData } from "./data.ts";
export { renderInvoicePdf } from "./invoice-pdf.ts";
export { renderReceiptPdf } from "./receipt-pdf.ts";

/**
 * Documents (docs/documents.md): the account's business details, and each payment's invoice and
 * receipt as data, pages and PDFs. `documents.invoice(id)` then `renderInvoicePdf(data)` is all
 * another capability (email) needs to attach one.
 */
export function createDocuments(
  w: Pick<Plumbing, "db" | "clock"> & {
    config: Pick<PaymentsConfig, "baseUrl" | "chain">;
    accounts: Pick<AccountsService, "findAccount">;
    payments: PaymentStore;
    lifecycle: Pick<Lifecycle, "transfersView">;
    events: Pick<EventStore, "listForPayment">;
  },
) {
  const accountName = async (id: string) => (await w.accounts.findAccount(id))?.name ?? null;
  const business = createBusinessService({
    store: createBusinessStore(w.db),
    clock: w.clock,
    accountExists: async (id) => (await w.accounts.findAccount(id)) !== null,
  });
  const refunds = createRefundStore(w.db);
  const documents = createDocumentsService({
    payments: w.payments,
    accountName,
    business,
    eventsOf: (paymentId) => w.events.listForPayment(paymentId),
    refundsOf: async (accountId, paymentId) => refunds.list({ accountId, paymentId, limit: REFUNDS_SHOWN }),
    transfersOf: async (row) => w.lifecycle.transfersView(row),
    baseUrl: w.config.baseUrl,
    chain: w.config.chain,
  });
  return { business, documents, forEmail: documentsForEmail({ business, documents }, accountName) };
}

export type Documents = ReturnType<typeof createDocuments>;
