/**
 * The deposit addresses every watcher looks for, one set shared by the settlement chain's
 * watcher and each source chain's: a payment's address reaches all of them the moment it is
 * issued. Kept as the first 52 bits of each address, as a number: a million of them fit in a
 * few tens of MB. A stray match only costs a lookup, since the ledger finds payments by the
 * full address.
 */
export function createWatchedAddresses(initial: Iterable<string> = []) {
  const prefixes = new Set<number>();
  // The address's first 13 hex digits: the last 40 digits of "0x" + address or of a 32-byte log topic.
  const key = (hex: string) => Number.parseInt(hex.slice(-40, -27), 16);
  for (const address of initial) prefixes.add(key(address));
  return {
    add(address: string): void {
      prefixes.add(key(address));
    },
    /** `address` as "0x" + 40 hex digits, or a log topic holding one (left-padded to 32 bytes). */
    has: (address: string): boolean => prefixes.has(key(address)),
    get size() {
      return prefixes.size;
    },
  };
}

export type WatchedAddresses = ReturnType<typeof createWatchedAddresses>;
