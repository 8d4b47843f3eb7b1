import { describe, expect, test } from "bun:test";
import {
  AUTHORIZATION_GAS_CAP,
  authorizationGasLimit,
  FLOOR_GAS_MULTIPLE,
  floorOf,
  TRANSFER_WITH_AUTHORIZATION_GAS,
} from "../../../src/chain/authorizations/floor.ts";
import { CHAINS } from "../../../src/lib/chains.ts";

const gwei = 1_000_000_000n;
const ETH = CHAINS.get("ethereum")!;
const BASE = CHAINS.get("base")!;

describe("the gasless floor", () => {
  test("20 transfers' gas at the conservative native price, when above the sweep floor", () => {
    // Ethereum at 10 gwei: 100,000 gas is 0.001 ETH, 10.00 USDC at 10,000 USD; twenty of them 200.00.
    expect(floorOf({ sweepFloor: ETH.sweepFloor, nativePrice: ETH.nativePrice, gasPriceWei: 10n * gwei })).toBe(
      200_000_000n,
    );
    expect(FLOOR_GAS_MULTIPLE * TRANSFER_WITH_AUTHORIZATION_GAS).toBe(2_000_000n);
  });

  test("the sweep floor when gas is cheap (an L2)", () => {
    // Base at 0.01 gwei: 20 x 100,000 x 0.01 gwei is 0.00002 ETH, 0.20 USDC; the sweep floor is 0.10.
    expect(floorOf({ sweepFloor: BASE.sweepFloor, nativePrice: BASE.nativePrice, gasPriceWei: gwei / 100n })).toBe(
      200_000n,
    );
    expect(floorOf({ sweepFloor: BASE.sweepFloor, nativePrice: BASE.nativePrice, gasPriceWei: gwei / 1000n })).toBe(
      BASE.sweepFloor,
    );
  });

  test("rounded up to a whole cent; a custom chain (no known price) has its sweep floor", () => {
    expect(floorOf({ sweepFloor: 10_001n, nativePrice: null, gasPriceWei: 100n * gwei })).toBe(20_000n);
    expect(floorOf({ sweepFloor: 10_000n, nativePrice: null, gasPriceWei: 10_000n * gwei })).toBe(10_000n);
  });

  test("every built-in chain has a native price", () => {
    for (const info of CHAINS.values()) expect(info.nativePrice).toBeGreaterThan(0n);
  });
});

describe("the gas cap", () => {
  test("the estimate and a fifth more, never above the cap", () => {
    expect(authorizationGasLimit(60_000n)).toBe(72_000n);
    expect(authorizationGasLimit(AUTHORIZATION_GAS_CAP)).toBe(AUTHORIZATION_GAS_CAP);
    expect(authorizationGasLimit(10_000_000n)).toBe(AUTHORIZATION_GAS_CAP);
  });
});
