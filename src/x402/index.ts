import type { Address, Hex, PublicClient } from "viem";
import type { Account } from "../accounts/service.ts";
import { unlessNotFound } from "../chain/rpc-errors.ts";
import type { DepthReader } from "../chain/watching/depth.ts";
import type { Db } from "../db/engine.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { runEvery } from "../lib/loop.ts";
import type { Lifecycle } from "../payments/lifecycle.ts";
import type { PaymentsService } from "../payments/service.ts";
import type { PaymentStore } from "../payments/store.ts";
import type { AuthorizationsApi } from "./authorizations.ts";
import { createFacilitator } from "./facilitator.ts";
import { createPayByX402 } from "./pay.ts";
import { createX402Store } from "./store.ts";

/** What the payer has to sign and send within (x402's maxTimeoutSeconds): the core's window too. */
export const MAX_TIMEOUT_SECONDS = 300;
/** How long a request waits for its transfer to be mined before answering what it is then. */
export const ANSWER_WAIT_MS = 30_000;
/** How often settlements answered before their outcome, and payments settling, are looked at again. */
const FOLLOW_EVERY_MS = 2_000;

/**
 * x402 (src/x402/): every payment payable at its x402 URL, and Stablegate as the facilitator of
 * the merchant's own x402 resources, both on the core's EIP-3009 authorizations.
 */
export function createX402(w: {
  db: Db;
  clock: Clock;
  log: Logger;
  config: { chain: { name: string; chainId: number; usdc: Address }; feeBps: number };
  authorizations: AuthorizationsApi;
  payments: { service: Pick<PaymentsService, "createExact">; store: PaymentStore; lifecycle: Lifecycle };
  accountOf: (accountId: string) => Promise<Account | null>;
  relayer: () => Address | null;
  /** The settlement chain: its public client and the depth reader its watcher and settler share. */
  chain: { client: PublicClient; depth: DepthReader };
  answerWaitMs?: number;
}) {
  const served = { chainId: w.config.chain.chainId, chainName: w.config.chain.name, usdc: w.config.chain.usdc };
  const waitMs = w.answerWaitMs ?? ANSWER_WAIT_MS;
  const facilitator = createFacilitator({
    authorizations: w.authorizations,
    payments: w.payments.service,
    paymentStore: w.payments.store,
    lifecycle: w.payments.lifecycle,
    store: createX402Store(w.db),
    accountOf: w.accountOf,
    clock: w.clock,
    log: w.log,
    served,
    defaultFeeBps: w.config.feeBps,
    relayer: w.relayer,
    chain: {
      receipt: (hash: Hex) => unlessNotFound(w.chain.client.getTransactionReceipt({ hash })),
      depth: () => w.chain.depth.read(),
    },
    settleWaitMs: waitMs,
  });
  let followRounds = 0;
  const pay = createPayByX402({
    authorizations: w.authorizations,
    creditedTransfers: async (row) =>
      new Set(
        (await w.payments.lifecycle.transfersView(row)).filter((t) => t.confirmed).map((t) => t.tx_hash.toLowerCase()),
      ),
    clock: w.clock,
    served,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    waitMs,
  });
  return {
    facilitator,
    pay,
    /** Rounds of the follower completed: tests wait on these, not on sleeps. */
    activity: () => ({ x402Rounds: followRounds }),
    /**
     * Every 2 s: records facilitator settlements whose answers did not wait for their outcome,
     * and confirms payout-address payments once their transfer is deep enough.
     */
    run: (signal: AbortSignal) =>
      runEvery(
        "x402 settlements",
        FOLLOW_EVERY_MS,
        async () => {
          try {
            await facilitator.followPending();
          } finally {
            followRounds++;
          }
        },
        { log: w.log, signal },
      ),
  };
}

export type X402 = ReturnType<typeof createX402>;
