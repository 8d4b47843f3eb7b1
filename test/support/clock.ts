/** A clock the tests move forward instead of sleeping (settlement retries wait 30 s and more). */
export interface TestClock {
  now(): number;
  advance(ms: number): void;
}

export function createTestClock(): TestClock {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => void (offset += ms) };
}
