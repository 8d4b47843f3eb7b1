import type { AccountsService } from "../accounts/service.ts";
import type { Idempotency } from "../idempotency/index.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import type { PaymentsService } from "../payments/service.ts";
import { createPaymentLinksService } from "./service.ts";
import { createPaymentLinkStore } from "./store.ts";

/** Payment links: each visit to a link's page makes a payment of the account that owns it. */
export function createPaymentLinks(
  w: Pick<Plumbing, "db" | "clock" | "ids" | "groupCommit"> & {
    payments: PaymentsService;
    accounts: Pick<AccountsService, "findAccount">;
    idempotency: Idempotency;
  },
) {
  return createPaymentLinksService({
    store: createPaymentLinkStore(w.db),
    payments: w.payments,
    findAccount: w.accounts.findAccount,
    idempotency: w.idempotency,
    groupCommit: w.groupCommit,
    clock: w.clock,
    ids: w.ids,
  });
}
