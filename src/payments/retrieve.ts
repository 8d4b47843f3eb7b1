import type { AccountsService } from "../accounts/service.ts";
import type { PaymentRecord } from "../chain/store.ts";
import { type Db, isPostgres } from "../db/engine.ts";
import { NotFoundError } from "../lib/errors.ts";
import { PAYMENT_ID } from "../lib/ids.ts";
import type { RetrieveStore } from "./retrieve-store.ts";
import type { PaymentsService } from "./service.ts";
import type { PaymentRow } from "./store.ts";

export interface RetrieveDeps {
  db: Db;
  accounts: Pick<AccountsService, "authenticate" | "keyHashOf" | "admit" | "recentKey" | "rememberKey">;
  payments: Pick<PaymentsService, "retrieve">;
  store: RetrieveStore;
  /** The merchant payment object; with the record when it was read already. */
  render: (row: PaymentRow, record?: PaymentRecord) => Promise<string>;
}

/**
 * GET /api/v1/payments/:id: the payment of the Authorization header's account, as JSON, with the
 * key checked first, as on every merchant route (a bad key is a 401 whatever the id; a malformed
 * id is then as unknown as any other, 404). On PostgreSQL the payment and its record come in one
 * statement with the key's check: with a key this replica resolved within seconds, a statement
 * that reads them only while that key is unrevoked; else (or when that found nothing: an unknown
 * id, or the key revoked meanwhile) one that reads the key by its hash too
 * (src/payments/retrieve-store.ts). On SQLite, where a statement costs no round trip, the key is
 * resolved through its cache and the rest read after it.
 */
export function createRetrieve({ db, accounts, payments, store, render }: RetrieveDeps) {
  return async (authorization: string | null, id: string): Promise<string> => {
    if (!PAYMENT_ID.test(id)) {
      await accounts.authenticate(authorization);
      throw new NotFoundError(`no payment ${id}`);
    }
    if (!isPostgres(db)) return render(await payments.retrieve(await accounts.authenticate(authorization), id));
    const hash = accounts.keyHashOf(authorization);
    const recent = await accounts.recentKey(hash);
    if (recent && recent.revoked_at === null) {
      const live = await store.findWithLiveKey(recent.id, recent.account_id, id);
      if (live) {
        await accounts.admit(hash, recent);
        return render(live.payment, live.record);
      }
    }
    const found = await store.find(hash, id);
    accounts.rememberKey(hash, found?.key ?? null);
    await accounts.admit(hash, found?.key ?? null);
    if (!found?.payment) throw new NotFoundError(`no payment ${id}`);
    return render(found.payment, found.record);
  };
}
