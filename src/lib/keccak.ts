import { createKeccak } from "hash-wasm";

// WebAssembly keccak-256 for the two hashes of every deposit address (payment creation). One
// hash is about 7x faster than viem's pure-JavaScript one; the whole address, with its ABI
// encoding and checksum, about 2x (`bun bench/keccak.ts`).
const hasher = await createKeccak(256);

export function keccakBytes(data: Uint8Array): Uint8Array {
  return hasher.init().update(data).digest("binary");
}

const encoder = new TextEncoder();

/**
 * EIP-55: a lower-case hex address (`0x` and 40 digits) in its checksummed form, as viem's
 * getAddress writes it, on the WebAssembly hash: the watcher checksums every recipient of every
 * USDC transfer it scans to look it up (src/payments/store.ts), where viem's would cost ~15 µs each.
 */
export function checksummed(lower: string): string {
  const digits = lower.slice(2);
  const hash = keccakBytes(encoder.encode(digits));
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    out += nibble >= 8 ? digits[i]!.toUpperCase() : digits[i];
  }
  return out;
}
