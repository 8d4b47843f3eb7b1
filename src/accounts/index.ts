import type { Address } from "viem";
import type { Plumbing } from "../lib/plumbing.ts";
import type { Speed } from "../lib/speed.ts";
import { createKeyCache } from "./key-cache.ts";
import { createAccountsService } from "./service.ts";
import { createAccountStore } from "./store.ts";

/** Accounts' slice of the configuration: who receives the fees accounts charge, and the default speed policy. */
export interface AccountsConfig {
  feeRecipient: Address | undefined;
  /** STABLEGATE_SPEED: the policy of accounts that set none. */
  defaultSpeed: Speed;
}

/**
 * Accounts and their API keys. Refuses to start (throws) when some account charges a fee and no
 * STABLEGATE_FEE_RECIPIENT would receive it.
 */
export async function createAccounts(w: Pick<Plumbing, "db" | "clock" | "ids"> & { config: AccountsConfig }) {
  const store = createAccountStore(w.db);
  if (!w.config.feeRecipient && (await store.countAccountsWithFee()) > 0) {
    throw new Error("STABLEGATE_FEE_RECIPIENT: required because some accounts charge a fee");
  }
  const keyCache = createKeyCache(w.db, w.clock);
  return createAccountsService({ store, clock: w.clock, ids: w.ids, defaultSpeed: w.config.defaultSpeed, keyCache });
}
