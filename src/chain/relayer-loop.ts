import type { Logger } from "../lib/log.ts";
import type { NonceManager } from "./nonces.ts";
import { backoffMs, errorMessage } from "./rpc-errors.ts";

/** What a loop that sends relayer transactions shows in /readyz. */
export interface LoopState {
  lastError: string | null;
  /** Rounds finished, failed ones included, so "it has looked" is observable. */
  rounds: number;
}

/**
 * Runs `tick` every `intervalMs` until `signal` aborts, for the loops that send from the relayer
 * (settlements, bridges): a failed round is logged and kept as `lastError`, resets the nonces
 * (a failed send may not have used its nonce) and backs off up to 30 s, so a dead RPC is not
 * hammered. `wait` is a waker's, so new work cuts the pause short.
 */
export async function runRelayerLoop(args: {
  tick: () => Promise<void>;
  state: LoopState;
  nonces: NonceManager;
  intervalMs: number;
  signal: AbortSignal;
  wait: (ms: number, signal: AbortSignal) => Promise<void>;
  log: Logger;
  /** The log line of a failed round, and what it says beside the error. */
  failure: { msg: string; fields?: Record<string, unknown> };
}): Promise<void> {
  const { state, signal } = args;
  let failures = 0;
  while (!signal.aborted) {
    try {
      await args.tick();
      failures = 0;
      state.lastError = null;
    } catch (error) {
      failures++;
      args.nonces.reset();
      state.lastError = errorMessage(error);
      args.log.warn(args.failure.msg, { ...args.failure.fields, error: state.lastError, attempt: failures });
    }
    state.rounds++;
    await args.wait(failures ? backoffMs(failures, args.intervalMs, 30_000) : args.intervalMs, signal);
  }
}
