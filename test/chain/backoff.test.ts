import { expect, test } from "bun:test";
import fc from "fast-check";
import { backoffMs } from "../../src/chain/rpc-errors.ts";

test("backoff has equal jitter: between half the exponential ceiling and all of it, capped at the maximum", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 60 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, r) => {
        const ceiling = Math.min(30_000, 500 * 2 ** Math.min(attempt, 20));
        const wait = backoffMs(attempt, 500, 30_000, () => r);
        expect(wait).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(wait).toBeLessThanOrEqual(ceiling);
      },
    ),
  );
  expect(backoffMs(3, 500, 30_000, () => 0)).toBe(2_000);
  expect(backoffMs(3, 500, 30_000, () => 0.999_999)).toBe(4_000);
  expect(backoffMs(50, 500, 30_000, () => 0)).toBe(15_000);
});
