import type { Account, Chain, PublicClient, Transport, WalletClient } from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import type { SettlementChain } from "../config.ts";
import type { NonceManager } from "../nonces.ts";
import { createAuthorizationsService } from "./service.ts";
import type { AuthorizationStore } from "./store.ts";
import { createSubmitter } from "./submitter.ts";

export { AuthorizationRefused } from "./service.ts";
export type * from "./types.ts";

export interface AuthorizationsWiring {
  chain: SettlementChain;
  store: AuthorizationStore;
  /** The settlement chain's clients and the relayer's nonces there, shared with the settler. */
  clients: {
    publicClient: PublicClient;
    walletClient: WalletClient<Transport, Chain | undefined, Account>;
    account: Account;
  };
  nonces: NonceManager;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  stuckAfterMs: number;
  /** Runs a write only the chain lease's holder may make; the submitter's saves are. */
  fenced: <T>(write: () => Promise<T>) => Promise<T>;
  /** What a payment still needs, seen transfers but the authorization's own counted (./submitter.ts). */
  stillDue: (paymentId: string, ours: string[]) => Promise<bigint>;
}

/** Seconds an authorization must stay valid when accepted: enough to send it and see it mined. */
export const ACCEPT_MARGIN_SECONDS = 30;

/**
 * Gasless payments on the settlement chain (EIP-3009, docs/gasless.md): the service every replica
 * answers with, and the submitter that only the chain lease's holder runs.
 */
export function createAuthorizations(w: AuthorizationsWiring) {
  // outcome() waiters on this replica hear of the submitter's changes at once; others poll.
  const listeners = new Set<() => void>();
  const changed = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      listeners.add(done);
    });
  const submitter = createSubmitter({
    store: w.store,
    fenced: w.fenced,
    client: w.clients.publicClient,
    wallet: w.clients.walletClient,
    account: w.clients.account,
    nonces: w.nonces,
    chainId: w.chain.chainId,
    usdc: w.chain.usdc,
    clock: w.clock,
    log: w.log,
    stuckAfterMs: w.stuckAfterMs,
    confirmations: w.chain.confirmations,
    stillDue: w.stillDue,
    pollIntervalMs: Math.max(100, Math.min(w.chain.pollIntervalMs, 2_000)),
    onChange: () => {
      for (const listener of [...listeners]) listener();
    },
  });
  const service = createAuthorizationsService({
    store: w.store,
    chain: w.chain,
    client: w.clients.publicClient,
    relayer: w.clients.account.address,
    clock: w.clock,
    ids: w.ids,
    log: w.log,
    marginSeconds: ACCEPT_MARGIN_SECONDS,
    wake: submitter.wake,
    changed,
  });
  return { service, submitter };
}
