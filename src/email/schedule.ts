/**
 * When a failed email is tried again, after each failed attempt: the first retry within a
 * minute (a server restarting), then further apart. After the last, about three and a half days
 * after the first attempt, the email is given up (`failed`), shown on the settings page and in
 * /readyz, and never sent.
 */
export const EMAIL_RETRY_SCHEDULE_MS: readonly number[] = [
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 3_600_000,
  4 * 3_600_000,
  8 * 3_600_000,
  12 * 3_600_000,
  24 * 3_600_000,
  24 * 3_600_000,
];

/** The delay before attempt `attempts + 1`, after `attempts` failed ones; null: give up. */
export function emailRetryDelay(schedule: readonly number[], attempts: number): number | null {
  return schedule[attempts - 1] ?? null;
}
