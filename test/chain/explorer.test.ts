/**
 * Block explorer links: one per built-in chain, on the explorer the chain's community uses, in
 * the `/tx/<hash>` and `/address/<address>` forms those explorers serve; none where no public
 * explorer can know the chain.
 */
import { describe, expect, test } from "bun:test";
import { explorerFor } from "../../src/chain/explorer.ts";
import { CHAINS } from "../../src/lib/chains.ts";

const TX = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060";
const ADDRESS = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

describe("explorerFor", () => {
  test("builds transaction and address links on the chain's explorer", () => {
    const base = explorerFor({ name: "base", chainId: 8453 })!;
    expect(base.tx(TX)).toBe(`https://basescan.org/tx/${TX}`);
    expect(base.address(ADDRESS)).toBe(`https://basescan.org/address/${ADDRESS}`);
    const sepolia = explorerFor({ name: "sepolia", chainId: 11155111 })!;
    expect(sepolia.tx(TX)).toBe(`https://sepolia.etherscan.io/tx/${TX}`);
    expect(explorerFor({ name: "polygon-amoy", chainId: 80002 })!.address(ADDRESS)).toBe(
      `https://amoy.polygonscan.com/address/${ADDRESS}`,
    );
  });

  test("every built-in chain has an https explorer, the one viem's chain data names (a second source)", () => {
    expect(CHAINS.size).toBe(12);
    for (const chain of CHAINS.values()) {
      expect(chain.explorer).toMatch(/^https:\/\/[a-z0-9.-]+$/);
      expect(chain.explorer).toBe(chain.viem.blockExplorers!.default.url);
      expect(explorerFor(chain)!.tx(TX)).toBe(`${chain.explorer}/tx/${TX}`);
    }
  });

  test("none for a custom chain, the local dev chain included", () => {
    expect(explorerFor({ name: "custom", chainId: 31337 })).toBeNull();
    expect(explorerFor({ name: "custom", chainId: 8453 })).toBeNull();
  });

  test("none for a built-in name run with another chain id (a fork or private network)", () => {
    expect(explorerFor({ name: "base", chainId: 31337 })).toBeNull();
  });
});
