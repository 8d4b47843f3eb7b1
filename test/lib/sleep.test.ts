/**
 * A loop's pause (src/lib/sleep.ts): cut short by a wake, and a wake that comes while the loop is
 * busy is not lost, so a credit handed to the settler mid-round is settled in the next round at once.
 */
import { expect, test } from "bun:test";
import { createWaker } from "../../src/lib/sleep.ts";

/** Whether `wait` resolved before a 5 s timer: the timer never fires in a passing test. */
async function resolvedAtOnce(waiting: Promise<void>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 5_000)));
  const result = await Promise.race([waiting.then(() => true as const), late]);
  clearTimeout(timer);
  return result;
}

test("a wake cuts the current wait short", async () => {
  const waker = createWaker();
  const waiting = waker.wait(60_000);
  waker.wake();
  expect(await resolvedAtOnce(waiting)).toBe(true);
});

test("a wake while nobody waits is kept for the next wait, once", async () => {
  const waker = createWaker();
  waker.wake();
  expect(await resolvedAtOnce(waker.wait(60_000))).toBe(true);
  // Used up: the wait after that runs its course (cut short here by an abort, not by the old wake).
  const controller = new AbortController();
  const waiting = waker.wait(60_000, controller.signal);
  let settled = false;
  void waiting.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve)); // let a wait that resolved at once say so
  expect(settled).toBe(false);
  controller.abort();
  expect(await resolvedAtOnce(waiting)).toBe(true);
});
