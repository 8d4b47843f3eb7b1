import type { ChainStore } from "../chain/store.ts";
import { serverSecret } from "../db/server-secrets.ts";
import type { Events } from "../events/index.ts";
import { randomHex } from "../lib/ids.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import type { PaymentsConfig } from "../payments/index.ts";
import type { PaymentStore } from "../payments/store.ts";
import { createClaimTokens } from "./claim-token.ts";
import { createRefundsService } from "./service.ts";
import { createRefundStore } from "./store.ts";

/**
 * Refunds without custody: the merchant's record of what is owed back, the payer's claim link, and
 * what the settlement chain's watcher matches their transfers against (docs/refunds.md).
 */
export async function createRefunds(
  w: Pick<Plumbing, "db" | "clock" | "ids"> & {
    config: Pick<PaymentsConfig, "baseUrl" | "chain">;
    events: Pick<Events, "store" | "written">;
    payments: PaymentStore;
    chain: Pick<ChainStore, "cursor">;
  },
) {
  const { db, clock, config } = w;
  // One key for every replica on the database: a link one shows, another accepts.
  const claimTokens = createClaimTokens(await serverSecret(db, "refund_claims", randomHex(32), clock.now()));
  return createRefundsService({
    db,
    store: createRefundStore(db),
    payments: w.payments,
    events: w.events.store,
    clock,
    ids: w.ids,
    claimTokens,
    view: {
      baseUrl: config.baseUrl,
      chainName: config.chain.name,
      usdc: config.chain.usdc,
      claimToken: claimTokens.tokenFor,
    },
    watchedUpTo: async (chainId) => {
      const cursor = await w.chain.cursor(chainId);
      return cursor ? Number(cursor.block_number) : null;
    },
    onEvent: w.events.written,
  });
}
