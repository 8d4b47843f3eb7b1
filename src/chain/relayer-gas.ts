import type { Address, PublicClient } from "viem";
import type { Clock } from "../lib/clock.ts";
import { isoMillis } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { sleep } from "../lib/sleep.ts";
import { errorMessage } from "./rpc-errors.ts";

/** Gas of one DepositFactoryV2.bridge call, rounded up: the clone's deployment and the burn through CCTP. */
export const BRIDGE_GAS = 250_000n;
/** The balance is "low" below what this many bridge calls cost at the chain's gas price. */
export const LOW_GAS_CALLS = 5n;
/** How often the balance is read again (by the injected clock). */
export const GAS_REFRESH_MS = 60_000;

export interface RelayerGasDeps {
  client: PublicClient;
  /** The chain's name, for the log and the refusal. */
  name: string;
  relayer: Address;
  clock: Clock;
  log: Logger;
  /** How often the loop looks whether a refresh is due. */
  pollIntervalMs: number;
}

export type RelayerGas = ReturnType<typeof createRelayerGas>;

/**
 * The relayer's native balance on one chain, read on its own loop once a minute, so /readyz
 * and the bridger answer from what was last read and never wait on that chain's RPC.
 */
export function createRelayerGas(deps: RelayerGasDeps) {
  const { client, name, relayer, clock, log } = deps;
  const state = {
    balance: null as bigint | null,
    lowBelow: null as bigint | null,
    readAt: null as number | null,
    lastError: null as string | null,
  };

  async function refresh(): Promise<void> {
    try {
      const [balance, gasPrice] = await Promise.all([client.getBalance({ address: relayer }), client.getGasPrice()]);
      state.balance = balance;
      state.lowBelow = LOW_GAS_CALLS * BRIDGE_GAS * gasPrice;
      state.lastError = null;
      if (balance < state.lowBelow)
        log.warn("relayer gas low", { chain: name, relayer, balance_wei: balance, low_below_wei: state.lowBelow });
    } catch (error) {
      const message = errorMessage(error);
      if (message !== state.lastError) log.warn("relayer gas: RPC failed", { chain: name, error: message });
      state.lastError = message;
    } finally {
      state.readAt = clock.now();
    }
  }

  /** Why the relayer cannot send on this chain now, or null: no gas as last read, or never read. */
  function problem(): string | null {
    if (state.balance === null)
      return state.lastError === null
        ? `the relayer's gas balance on ${name} has not been read yet`
        : `the relayer's gas balance on ${name} cannot be read: ${state.lastError}`;
    if (state.balance === 0n)
      return `the relayer ${relayer} has no gas on ${name}; fund it with the chain's native coin`;
    return null;
  }

  return {
    refresh,
    problem,
    /** Whether the last balance read was above zero. */
    ok: () => problem() === null,
    /** For /readyz: what was last read, with no RPC call. */
    status: () => ({
      relayer,
      balance_wei: state.balance?.toString() ?? null,
      low: state.balance !== null && state.lowBelow !== null && state.balance < state.lowBelow,
      low_below_wei: state.lowBelow?.toString() ?? null,
      read_at: state.readAt === null ? null : isoMillis(state.readAt),
      last_error: state.lastError,
    }),
    /** Reads at once, then again whenever GAS_REFRESH_MS has passed, until `signal` aborts. */
    async run(signal: AbortSignal): Promise<void> {
      while (!signal.aborted) {
        if (state.readAt === null || clock.now() - state.readAt >= GAS_REFRESH_MS) await refresh();
        await sleep(deps.pollIntervalMs, signal);
      }
    },
  };
}
