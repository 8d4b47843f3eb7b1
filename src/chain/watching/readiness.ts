import type { RelayerGas } from "../relayer-gas.ts";
import type { SourceReadiness } from "./source-readiness.ts";
import type { Watcher } from "./watcher.ts";

/** One chain the server watches: the settlement chain or an enabled source chain. */
export interface WatchedChain {
  role: "settlement" | "source";
  name: string;
  watcher: Watcher;
  gas: RelayerGas;
  /** A source chain's deposit factories and Circle's contracts there. */
  readiness?: SourceReadiness;
}

export type ChainReadiness = ReturnType<typeof chainReadiness>;

/**
 * A chain as /readyz shows it, from what its loops last saw (no RPC call, so a dead chain never
 * slows the answer): degraded (`ok: false`) while its RPC fails or has not answered yet, and a
 * source chain while its deposit factory is not there (it is then neither offered nor scanned).
 */
export function chainReadiness({ role, name, watcher, gas, readiness }: WatchedChain) {
  const { head, cursor, lastError } = watcher.status();
  const relayerGas = gas.status();
  const problem = gas.problem();
  return {
    name,
    chain_id: watcher.chainId,
    role,
    ok: lastError === null && head !== null && (readiness?.isReady() ?? true),
    head: head?.toString() ?? null,
    scanned_to: cursor?.toString() ?? null,
    lag_blocks: head !== null && cursor !== null ? Number(head - cursor) : null,
    confirmations: watcher.confirmations,
    last_error: lastError ?? (head === null ? "no answer from the chain's RPC yet" : null),
    relayer_gas: { ...relayerGas, ok: problem === null, problem },
    ...readiness?.status(),
  };
}
