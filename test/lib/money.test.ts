import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { formatAmount, formatExact, MAX_AMOUNT, MICRO_PER_USDC, parseAmount, splitFee } from "../../src/lib/money.ts";

const MAX_CENTS = MAX_AMOUNT / 10_000n; // 100,000,000,000 cents
/** The canonical request text for a number of cents, built without money.ts. */
const centsText = (cents: bigint) => `${cents / 100n}.${String(cents % 100n).padStart(2, "0")}`;

describe("parseAmount / formatAmount", () => {
  test("round-trip for every cents value up to the maximum", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_CENTS }), (cents) => {
        const text = centsText(cents);
        const micro = parseAmount(text);
        expect(micro).toBe(cents * 10_000n);
        expect(formatAmount(micro!)).toBe(text);
      }),
      { numRuns: 2_000 },
    );
  });

  test("formatAmount always has exactly two decimals", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_CENTS }), (cents) => {
        expect(formatAmount(cents * 10_000n)).toMatch(/^(0|[1-9]\d*)\.\d{2}$/);
      }),
    );
  });

  test("known values", () => {
    expect(parseAmount("25.00")).toBe(25_000_000n);
    expect(parseAmount("0.01")).toBe(10_000n);
    expect(parseAmount("1000000000.00")).toBe(MAX_AMOUNT);
    expect(parseAmount("0.00")).toBe(0n); // the range is the caller's rule
    expect(formatAmount(25_000_000n)).toBe("25.00");
    expect(formatAmount(0n)).toBe("0.00");
    expect(formatAmount(MAX_AMOUNT)).toBe("1000000000.00");
    expect(formatAmount(12_340_000n)).toBe("12.34");
  });

  test.each([
    "25",
    "25.0",
    "25.000",
    "-1.00",
    "+1.00",
    "abc",
    "",
    " 25.00",
    "25.00 ",
    "1e3",
    "1,000.00",
    "0x10.00",
    "25.0O",
    "٢٥.٠٠",
    "25.00\n",
  ])("parseAmount rejects %p", (text) => {
    expect(parseAmount(text)).toBeNull();
  });

  test("parseAmount refuses absurdly long inputs without building huge bigints", () => {
    expect(parseAmount(`${"9".repeat(14)}.00`)).toBeNull();
    expect(parseAmount(`${"9".repeat(10_000)}.00`)).toBeNull();
  });

  test("parseAmount still parses 13 whole digits exactly: the length cut-off is past them", () => {
    expect(parseAmount(`${"9".repeat(13)}.99`)).toBe(9_999_999_999_999_990_000n);
  });

  test("parseAmount never accepts a string that is not digits, a point and two digits", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (text) => {
        const micro = parseAmount(text);
        if (micro !== null) {
          expect(text).toMatch(/^\d+\.\d{2}$/);
          expect(typeof micro).toBe("bigint");
        }
      }),
    );
  });
});

describe("formatExact", () => {
  test("two decimals, more only when needed, and exact", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 96n }), (micro) => {
        const text = formatExact(micro);
        expect(text).toMatch(/^(0|[1-9]\d*)\.\d{2,6}$/);
        const [whole, fraction] = text.split(".") as [string, string];
        if (fraction.length > 2) expect(fraction.endsWith("0")).toBe(false);
        // Reading it back gives the same integer: nothing was rounded.
        expect(BigInt(whole) * MICRO_PER_USDC + BigInt(fraction.padEnd(6, "0"))).toBe(micro);
      }),
      { numRuns: 2_000 },
    );
  });

  test("known values", () => {
    expect(formatExact(25_000_000n)).toBe("25.00");
    expect(formatExact(25_000_001n)).toBe("25.000001");
    expect(formatExact(25_100_000n)).toBe("25.10");
    expect(formatExact(25_123_000n)).toBe("25.123");
    expect(formatExact(1n)).toBe("0.000001");
    expect(formatExact(0n)).toBe("0.00");
    expect(formatExact(-1_500_000n)).toBe("-1.50");
  });

  test("agrees with formatAmount on whole cents", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_CENTS }), (cents) => {
        expect(formatExact(cents * 10_000n)).toBe(formatAmount(cents * 10_000n));
      }),
    );
  });
});

describe("splitFee", () => {
  test("net + fee = received and fee = floor(received * bps / 10000), all bigint", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 255n }), fc.integer({ min: 0, max: 10_000 }), (received, bps) => {
        const { fee, net } = splitFee(received, bps);
        expect(typeof fee).toBe("bigint");
        expect(typeof net).toBe("bigint");
        expect(net + fee).toBe(received);
        expect(fee).toBe((received * BigInt(bps)) / 10_000n);
        // floor: fee * 10000 <= received * bps < (fee + 1) * 10000
        expect(fee * 10_000n <= received * BigInt(bps)).toBe(true);
        expect(received * BigInt(bps) < (fee + 1n) * 10_000n).toBe(true);
        expect(fee >= 0n && fee <= received).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  test("edges: no fee, the whole amount, rounding down", () => {
    expect(splitFee(25_000_000n, 0)).toEqual({ fee: 0n, net: 25_000_000n });
    expect(splitFee(25_000_000n, 10_000)).toEqual({ fee: 25_000_000n, net: 0n });
    expect(splitFee(25_000_000n, 150)).toEqual({ fee: 375_000n, net: 24_625_000n });
    expect(splitFee(1n, 9_999)).toEqual({ fee: 0n, net: 1n }); // the merchant keeps the remainder
    expect(splitFee(3n, 5_000)).toEqual({ fee: 1n, net: 2n });
    expect(splitFee(0n, 150)).toEqual({ fee: 0n, net: 0n });
  });

  test("amounts past 2^53 stay exact (a float would not)", () => {
    const received = 2n ** 64n + 1n;
    const { fee, net } = splitFee(received, 1);
    expect(fee).toBe(received / 10_000n);
    expect(net + fee).toBe(received);
  });
});
