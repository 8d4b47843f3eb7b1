/**
 * What to burn on the source chain so a payment receives at least what it is due (burnFor),
 * over every amount a payment can have and every fee rate the fee endpoint may quote, in
 * hundredths of a basis point as CCTP quotes them. A hundredth of a basis point is one part
 * per million, so the fee the attesters charge at `h` hundredths is ceil(burn * h / 10^6).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { burnFor, MAX_FEE_BPS } from "../../../src/chain/redeeming/quote.ts";
import { MAX_AMOUNT } from "../../../src/lib/money.ts";
import { feeAt } from "../../support/crosschain.ts";

const PPM = 1_000_000n;
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

const amountDue = fc.bigInt({ min: 1n, max: MAX_AMOUNT });
/** Fee rates in hundredths of a basis point, from free to just under the refusal threshold. */
const hundredths = fc.integer({ min: 0, max: MAX_FEE_BPS * 100 - 1 });

describe("burnFor", () => {
  test("the amount minted always covers the amount due, at the quoted fee and at a fee up to 25% above it", () => {
    fc.assert(
      fc.property(amountDue, hundredths, (due, h) => {
        const { burn, maxFee } = burnFor(due, h / 100);
        const quotedFee = feeAt(burn, h / 100);
        const raisedFee = ceilDiv(burn * BigInt(h) * 5n, 4n * PPM);
        expect(maxFee).toBeGreaterThanOrEqual(0n);
        // The fee the attesters charge never exceeds maxFee, so the transfer stays fast...
        expect(quotedFee).toBeLessThanOrEqual(maxFee);
        expect(raisedFee).toBeLessThanOrEqual(maxFee);
        // ...and whatever fee up to maxFee is charged, at least the amount due is minted.
        expect(burn - maxFee).toBeGreaterThanOrEqual(due);
        expect(burn - quotedFee).toBeGreaterThanOrEqual(due);
      }),
      { numRuns: 5_000 },
    );
  });

  test("the payer overpays at most a quarter of the quoted fee, one part per million of the burn and one micro-USDC", () => {
    fc.assert(
      fc.property(amountDue, hundredths, (due, h) => {
        const { burn } = burnFor(due, h / 100);
        const excess = burn - feeAt(burn, h / 100) - due;
        expect(excess).toBeGreaterThanOrEqual(0n);
        expect(excess).toBeLessThanOrEqual((burn * BigInt(h + 4)) / (4n * PPM) + 1n);
      }),
      { numRuns: 5_000 },
    );
  });

  test("a free transfer burns exactly the amount due", () => {
    fc.assert(
      fc.property(amountDue, (due) => {
        expect(burnFor(due, 0)).toEqual({ burn: due, maxFee: 0n });
      }),
    );
  });

  test("a rate that is negative, not a number, or at or above the threshold is refused", () => {
    fc.assert(
      fc.property(
        amountDue,
        fc.oneof(
          fc.double({ max: -Number.MIN_VALUE, noNaN: true }),
          fc.double({ min: MAX_FEE_BPS }),
          fc.constant(Number.NaN),
        ),
        (due, feeBps) => {
          expect(() => burnFor(due, feeBps)).toThrow(RangeError);
        },
      ),
    );
  });

  // The property above seldom draws the threshold itself: pin the boundary on both sides.
  test("the threshold rate itself is refused, the hundredth below it is not", () => {
    expect(() => burnFor(25_000_000n, MAX_FEE_BPS)).toThrow(RangeError);
    expect(burnFor(25_000_000n, MAX_FEE_BPS - 0.01).burn).toBeGreaterThan(25_000_000n);
  });
});
