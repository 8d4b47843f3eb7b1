import { createKeccak } from "hash-wasm";

// WebAssembly keccak-256 for the two hashes of every deposit address (payment creation). One
// hash is about 7x faster than viem's pure-JavaScript one; the whole address, with its ABI
// encoding and checksum, about 2x (`bun bench/keccak.ts`).
const hasher = await createKeccak(256);

export function keccakBytes(data: Uint8Array): Uint8Array {
  return hasher.init().update(data).digest("binary");
}
