/**
 * Waiting on conditions, never on the clock alone: a test polls for the state it expects, and
 * before asserting that a loop did nothing it waits for that loop to have run.
 */
import type { RunningServer } from "../../src/server.ts";

/** Whatever reports the loops' rounds: the running server, or a stack holding one. */
type Loops = Pick<RunningServer, "activity">;

/** Polls `fn` until it returns something other than undefined/false/null; throws after `timeoutMs`. */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = "condition",
  everyMs = 50,
): Promise<Exclude<T, false | undefined | null>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== false && value !== null)
        return value as Exclude<T, false | undefined | null>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : String(last)})`,
      );
    await Bun.sleep(everyMs);
  }
}

/**
 * Resolves once the webhook worker has completed a whole round that began at `at` (epoch ms,
 * default now) or later, and every send it started has finished: anything it was going to send
 * by then has been sent, so "nothing more arrived" means it.
 */
export async function webhookWorkerRanSince(running: Loops, at = Date.now(), timeoutMs = 15_000): Promise<void> {
  await waitFor(() => Date.now() >= at, timeoutMs, `the moment ${new Date(at).toISOString()}`, 20);
  // The round in progress now may have begun before `at`; the one after it did not.
  const seen = running.activity().webhookRounds;
  await waitFor(
    () => {
      const { webhookRounds, webhookSending } = running.activity();
      return webhookRounds >= seen + 2 && webhookSending === 0;
    },
    timeoutMs,
    "a webhook worker round after the moment and its sends to finish",
    20,
  );
}

/** Resolves once the expiry loop has completed a whole round that began now or later. */
export const expiryRanSince = (running: Loops, timeoutMs = 15_000) =>
  wholeRoundSince(running, "expiryRounds", timeoutMs);

/** Resolves once the settlement chain's watcher has completed a whole round that began now or later. */
export const watcherRanSince = (running: Loops, timeoutMs = 15_000) =>
  wholeRoundSince(running, "watcherRounds", timeoutMs);

/** Resolves once the cross-chain redeemer has completed a whole round that began now or later. */
export const redeemerRanSince = (running: Loops, timeoutMs = 15_000) =>
  wholeRoundSince(running, "redeemerRounds", timeoutMs);

async function wholeRoundSince(
  running: Loops,
  loop: "expiryRounds" | "redeemerRounds" | "watcherRounds",
  timeoutMs: number,
): Promise<void> {
  // The round in progress now may have begun earlier; the one after it did not.
  const seen = running.activity()[loop];
  await waitFor(() => running.activity()[loop] >= seen + 2, timeoutMs, `a whole round of ${loop}`, 20);
}

/**
 * Resolves once the settlement loop has finished a whole round that began now or later, seen
 * through /readyz (`chain.settlement.rounds`), so it works for a server subprocess too.
 */
export async function settlerRanSince(server: { readyz(): Promise<any> }, timeoutMs = 15_000): Promise<void> {
  const rounds = async (): Promise<number> => (await server.readyz()).chain.settlement.rounds;
  const seen = await rounds();
  await waitFor(async () => (await rounds()) >= seen + 2, timeoutMs, "a whole settlement round", 20);
}
