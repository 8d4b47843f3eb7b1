/**
 * SQLite's INTEGER is a signed 64-bit number, and bun:sqlite binds a larger bigint modulo 2^64
 * without a word (2^63 is stored as -2^63). On-chain amounts are uint256, so every amount read
 * from a chain is checked against this bound before it is stored or added to a stored sum.
 */
export const INT64_MAX = 2n ** 63n - 1n;

/** Whether `value` can be stored in an INTEGER column as it is. */
export function fitsInt64(value: bigint): boolean {
  return value >= -INT64_MAX - 1n && value <= INT64_MAX;
}

/** For store functions: a value that would wrap is a bug upstream, never written. */
export function int64(value: bigint, what: string): bigint {
  if (!fitsInt64(value)) throw new RangeError(`${what} ${value} does not fit a 64-bit integer column`);
  return value;
}
