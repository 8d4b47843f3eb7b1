/**
 * When each attempt is made, counted from the previous one: immediately, then 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h: about three days in all (DESIGN.md §6).
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
];

const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * Delay before attempt number `attempt + 1` after `attempt` attempts, with ±10% jitter so a
 * recovering receiver is not hit by every retry at once; null when the schedule is exhausted.
 * A receiver's Retry-After (429/503) is honoured when it asks for longer.
 */
export function nextDelayMs(
  schedule: readonly number[],
  attempt: number,
  retryAfterMs: number | null,
  random = Math.random,
): number | null {
  const base = schedule[attempt];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + random() * 0.2));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `now`; null when absent or bad. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1_000;
  // An HTTP date names its day or month; without letters Date.parse would guess ("-5", "1.5").
  if (!/[a-z]/i.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
