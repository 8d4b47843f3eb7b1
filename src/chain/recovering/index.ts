import type { Account } from "../../accounts/service.ts";
import type { Clock } from "../../lib/clock.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import type { PaymentRow } from "../../payments/store.ts";
import type { ChainClients } from "../client.ts";
import type { ChainSideConfig } from "../config.ts";
import type { NonceManager } from "../nonces.ts";
import type { SourceNetwork } from "../source-networks.ts";
import type { RecoveryNetwork } from "./networks.ts";
import { createRecoverer } from "./recoverer.ts";
import { createRecoveriesService } from "./service.ts";
import type { RecoveryStore } from "./store.ts";

export interface RecoveriesWiring {
  config: Pick<ChainSideConfig, "chain">;
  store: RecoveryStore;
  /** The settlement chain's clients and relayer nonces, and each enabled source chain's. */
  settlement: { clients: ChainClients; nonces: NonceManager };
  sources: ReadonlyMap<number, SourceNetwork>;
  payments: {
    retrieve(account: Account, id: string): Promise<PaymentRow>;
    findById(id: string): Promise<PaymentRow | null>;
  };
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** When a sent transaction counts as stuck, as for settlements. */
  stuckAfterMs: number;
  /** Runs a write only the chain lease's holder may make (see src/leases/); the recoverer's saves are. */
  fenced?: <T>(write: () => Promise<T>) => Promise<T>;
}

/** Recovery of tokens sent by mistake: the API's service and the loop that carries requests out, on every chain. */
export function createRecoveries(w: RecoveriesWiring) {
  const networks: RecoveryNetwork[] = [
    {
      name: w.config.chain.name,
      chainId: w.config.chain.chainId,
      settlement: true,
      confirmations: w.config.chain.confirmations,
      ...w.settlement,
    },
    ...[...w.sources.values()].map((s) => ({
      name: s.source.name,
      chainId: s.source.chainId,
      settlement: false,
      confirmations: s.source.confirmations,
      clients: s.clients,
      nonces: s.nonces,
    })),
  ];
  const { fenced } = w;
  const recoverer = createRecoverer({
    // What the recoverer saves is what it signs and sends: fenced, so a replica that lost the lease sends nothing.
    store: fenced ? { ...w.store, save: (row, now) => fenced(() => w.store.save(row, now)) } : w.store,
    findPayment: w.payments.findById,
    networks,
    clock: w.clock,
    log: w.log,
    stuckAfterMs: w.stuckAfterMs,
  });
  const service = createRecoveriesService({
    store: w.store,
    payments: w.payments,
    networks,
    clock: w.clock,
    ids: w.ids,
    log: w.log,
    wake: recoverer.wake,
  });
  return { service, recoverer };
}
