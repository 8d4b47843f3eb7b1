import type { Account } from "../accounts/service.ts";
import type { Idempotency, StoredResponse } from "../idempotency/index.ts";
import type { CreatePaymentInput } from "./schema.ts";
import type { PaymentsService } from "./service.ts";
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
 */
export function createPaymentOnce(deps: CreateOnceDeps) {
  return (
    account: Account,
    key: string | null,
    body: CreatePaymentInput,
    metadataText: string | null,
  ): Promise<StoredResponse> =>
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
}
