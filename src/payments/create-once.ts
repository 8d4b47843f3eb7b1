import type { Account } from "../accounts/service.ts";
import type { Idempotency, StoredResponse } from "../idempotency/index.ts";
import type { CreatePaymentInput } from "./schema.ts";
import { KeyChangedError, type PaymentsService } from "./service.ts";
import type { PaymentRow } from "./store.ts";

export interface CreateOnceDeps {
  payments: PaymentsService;
  idempotency: Idempotency;
  /** The new payment's JSON, as the create answers it and an idempotent replay repeats it. */
  renderNewPayment: (row: PaymentRow) => string;
}

/**
 * Creates a payment at most once per idempotency key (none: every call creates one), storing
 * the 201 and its JSON in the payment's own transaction. The API and the dashboard's form both
 * create through here, so a key means the same thing whichever way the payment was asked for.
 *
 * On PostgreSQL a create asked for with an API key may have taken the key from the cache; its
 * insert stores the payment only while that key and its account's terms hold
 * (src/payments/insert-store.ts). When they no longer do, nothing was stored and the idempotency key was
 * released: `reauthenticate` reads the key afresh (a 401 if it was revoked) and the payment is
 * built again for the account as it now is.
 */
export function createPaymentOnce(deps: CreateOnceDeps) {
  const once = (account: Account, key: string | null, body: CreatePaymentInput, metadataText: string | null) =>
    deps.idempotency.run(account.id, key, body, async (commit) => {
      if (key === null) {
        // Nothing to store beside the payment: its insert alone is the create.
        const row = await deps.payments.create(account, body, metadataText);
        return { status: 201, body: deps.renderNewPayment(row) };
      }
      let json = "";
      await deps.payments.create(account, body, metadataText, (row) => {
        json = deps.renderNewPayment(row);
        return commit(201, json);
      });
      return { status: 201, body: json };
    });

  return async (
    account: Account,
    key: string | null,
    body: CreatePaymentInput,
    metadataText: string | null,
    reauthenticate?: () => Promise<Account>,
  ): Promise<StoredResponse> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(account, key, body, metadataText);
      } catch (error) {
        if (!(error instanceof KeyChangedError) || !reauthenticate || attempt === MAX_ATTEMPTS) throw error;
        account = await reauthenticate();
      }
    }
  };
}

/** Past this, the account changed again at every attempt: the caller is told to retry (409). */
const MAX_ATTEMPTS = 3;
