/** Time is injected so expiry and retries are testable without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Every timestamp the API shows: ISO 8601 UTC with milliseconds ("2026-11-21T15:30:37.152Z"),
 * as the interface fixes for created_at and expires_at. Null stays null (a time not set yet).
 */
export function isoMillis(ms: number): string;
export function isoMillis(ms: number | null): string | null;
export function isoMillis(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
