import type { Address } from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import type { PaymentRow } from "../../payments/store.ts";
import type { createChainClients } from "../client.ts";
import type { CrossChainConfig } from "../cross-chain-config.ts";
import type { NonceManager } from "../nonces.ts";
import { createAttestationApi } from "./attestation-api.ts";
import { createRedeemer } from "./redeemer.ts";
import { createCrossChainService, worthRedeeming } from "./service.ts";
import { createSourceBurns } from "./source-burn.ts";
import type { BurnStore } from "./store.ts";

export interface CrossChainWiring {
  config: CrossChainConfig;
  burns: BurnStore;
  clients: ReturnType<typeof createChainClients>;
  nonces: NonceManager;
  depositAddressOf: (paymentId: string) => Promise<Address | null>;
  paymentOf: (paymentId: string) => Promise<PaymentRow | null>;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** When a sent transaction counts as stuck, as for settlements. */
  stuckAfterMs: number;
  /** Runs a write only the chain lease's holder may make (see src/leases/); the redeemer's saves are. */
  fenced?: <T>(write: () => Promise<T>) => Promise<T>;
}

/** Cross-chain funding: the public API's service and the loop that redeems recorded burns. */
export function createCrossChain(w: CrossChainWiring) {
  const api = createAttestationApi(w.config.apiUrl);
  const sourceBurns = createSourceBurns(w.config);
  const { fenced } = w;
  const redeemer = createRedeemer({
    config: w.config,
    // What the redeemer saves is what it signs and sends: fenced, so a replica that lost the lease sends nothing.
    burns: fenced ? { ...w.burns, save: (burn, now) => fenced(() => w.burns.save(burn, now)) } : w.burns,
    api,
    destination: { client: w.clients.publicClient, wallet: w.clients.walletClient, nonces: w.nonces },
    depositAddressOf: w.depositAddressOf,
    worthRedeeming: async (paymentId, amount) => {
      const row = await w.paymentOf(paymentId);
      return row !== null && worthRedeeming(row, amount, w.config.redeemFloor);
    },
    sourceBurns,
    clock: w.clock,
    log: w.log,
    stuckAfterMs: w.stuckAfterMs,
  });
  const service = createCrossChainService({
    config: w.config,
    burns: w.burns,
    api,
    sourceBurns,
    clock: w.clock,
    ids: w.ids,
    log: w.log,
    wake: redeemer.wake,
  });
  return { service, redeemer, attestation: api };
}
