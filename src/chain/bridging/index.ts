import type { Clock } from "../../lib/clock.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import { formatExact } from "../../lib/money.ts";
import type { Lifecycle } from "../../payments/lifecycle.ts";
import type { PaymentStore } from "../../payments/store.ts";
import type { BridgeView } from "../../payments/view.ts";
import type { BurnStore } from "../redeeming/store.ts";
import type { SourceNetwork } from "../source-networks.ts";
import type { SourceReadiness } from "../watching/source-readiness.ts";
import { createBridger } from "./bridger.ts";
import type { BridgeRow, BridgeStore } from "./store.ts";

export interface BridgingWiring {
  networks: ReadonlyMap<number, SourceNetwork>;
  bridges: BridgeStore;
  burns: BurnStore;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Circle's fees from a source domain to the settlement chain (the attestation API's fee endpoint). */
  fees: (sourceDomain: number) => Promise<{ fast: number }>;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  stuckAfterMs: number;
  /** Wakes the redeemer, which attests and mints the burns handed to it. */
  onBurned: () => void;
  /** Why the relayer cannot send on a chain now (no gas as last read), or null. */
  gasProblem: (chainId: number) => string | null;
  /** Each source chain's readiness (its deposit factory there), by chain id. */
  readiness: (chainId: number) => Pick<SourceReadiness, "problem" | "recheck">;
}

/** One bridger per enabled source chain, each its own loop, so one chain's trouble never holds up another. */
export function createBridging(w: BridgingWiring) {
  const bridgers = [...w.networks.values()].map((network) =>
    createBridger({
      network,
      bridges: w.bridges,
      burns: w.burns,
      payments: w.payments,
      lifecycle: w.lifecycle,
      transaction: w.transaction,
      fastFeeBps: async (domain) => (await w.fees(domain)).fast,
      clock: w.clock,
      ids: w.ids,
      log: w.log,
      stuckAfterMs: w.stuckAfterMs,
      onBurned: w.onBurned,
      gasProblem: () => w.gasProblem(network.source.chainId),
      readiness: w.readiness(network.source.chainId),
    }),
  );
  const byChain = new Map([...w.networks.keys()].map((chainId, i) => [chainId, bridgers[i]!]));
  return {
    /** For /readyz: each source chain's bridging. */
    status: () => Promise.all(bridgers.map((b) => b.status())),
    /** Credits arrived on `chainId`: its bridger looks at once. */
    wake(chainId?: number): void {
      if (chainId === undefined) for (const b of bridgers) b.wake();
      else byChain.get(chainId)?.wake();
    },
    run: (signal: AbortSignal) => Promise.all(bridgers.map((b) => b.run(signal))),
  };
}

/** What the payment object says of a bridge (lifecycle's transfers view). */
export function bridgeView(row: BridgeRow): BridgeView {
  return {
    state: row.state,
    fee: row.fee === null ? null : formatExact(row.fee),
    burn_tx_hash: row.burn_tx_hash,
    mint_tx_hash: row.mint_tx_hash,
  };
}
