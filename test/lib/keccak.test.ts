/**
 * The WebAssembly EIP-55 checksum the watcher's lookups use (src/lib/keccak.ts) writes every
 * address exactly as viem's getAddress does: a thousand random ones, and the EIP's own examples.
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { getAddress } from "viem";
import { checksummed } from "../../src/lib/keccak.ts";

test("checksummed agrees with viem's getAddress", () => {
  for (let i = 0; i < 1_000; i++) {
    const lower = `0x${randomBytes(20).toString("hex")}`;
    expect(checksummed(lower)).toBe(getAddress(lower));
  }
  // EIP-55's test vectors.
  for (const address of [
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
  ]) {
    expect(checksummed(address.toLowerCase())).toBe(address);
  }
});
