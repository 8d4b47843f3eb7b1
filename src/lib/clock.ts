/** Time is injected so expiry and retries are testable without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function isoMillis(ms: number): string {
  return new Date(ms).toISOString();
}
