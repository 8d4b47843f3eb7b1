import type { EventStore } from "../events/store.ts";
import { type Clock, isoMillis } from "../lib/clock.ts";
import { NotFoundError } from "../lib/errors.ts";
import type { IdGenerator } from "../lib/ids.ts";
import type { Speed } from "../lib/speed.ts";
import { payoutAddressFrom, toAccountJson } from "./service.ts";
import type { AccountRow, AccountStore } from "./store.ts";

export interface PayoutDeps {
  store: AccountStore;
  /** Where the change is recorded (and queued as webhooks), in the transaction that makes it. */
  events: EventStore;
  clock: Clock;
  ids: IdGenerator;
  /** STABLEGATE_SPEED, for the account as it is printed and recorded (toAccountJson). */
  defaultSpeed: Speed;
}

export type PayoutService = ReturnType<typeof createPayoutService>;

/** Changing where an account's money goes: a command-line action only, and always on the record. */
export function createPayoutService({ store, events, clock, ids, defaultSpeed }: PayoutDeps) {
  const toJson = (row: AccountRow) => toAccountJson(row, defaultSpeed);
  return {
    /**
     * Points the account's future payments at a new payout address. Existing payments keep the
     * address committed in their deposit address's salt: no server can redirect those funds.
     * The change is recorded as an `account.updated` event in the same transaction; setting the
     * address the account already has changes nothing and records nothing.
     */
    async setPayoutAddress(accountId: string, text: string) {
      const payoutAddress = payoutAddressFrom(text);
      return store.transaction(async () => {
        const before = await store.findAccountToUpdate(accountId);
        if (!before) throw new NotFoundError(`no account ${accountId}`);
        if (before.payout_address === payoutAddress) return toJson(before);
        const after = (await store.setPayoutAddress(accountId, payoutAddress))!;
        const now = clock.now();
        const id = ids.prefixed("evt");
        const payload = {
          id,
          object: "event",
          type: "account.updated",
          created_at: isoMillis(now),
          data: { account: toJson(after), previous_attributes: { payout_address: before.payout_address } },
        };
        await events.insert({
          id,
          account_id: accountId,
          type: "account.updated",
          payment_id: null,
          payload: JSON.stringify(payload),
          created_at: now,
        });
        return toJson(after);
      });
    },
  };
}
