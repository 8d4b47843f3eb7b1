/**
 * What a test file starts once for all its tests, in one line at its top level:
 *
 *   const stack = useStack({ confirmations: 2 });   // started in beforeAll, stopped in afterAll
 *
 * The object returned stands for what was started: read it inside tests and hooks.
 */
import { afterAll, beforeAll } from "bun:test";
import { type Stack, type StackOptions, startStack } from "./stack.ts";

export interface Started<T> {
  value: T;
  stop(): unknown;
}

/**
 * Registers the calling file's beforeAll, which runs `start`, and afterAll, which stops what it
 * started, also after a beforeAll that timed out (the start is waited for, then stopped). `start`
 * stops what it started itself when it fails half-way. `name` is for the error of a read too early.
 */
export function perFile<T extends object>(name: string, start: () => Promise<Started<T>>): T {
  let starting: Promise<Started<T>> | undefined;
  let started: Started<T> | undefined;
  beforeAll(async () => {
    starting = start();
    started = await starting;
  });
  afterAll(async () => (await starting?.catch(() => undefined))?.stop());
  return new Proxy({} as T, {
    get(_, key) {
      // Not a thenable: the value may be returned from an async function.
      if (typeof key === "symbol" || key === "then") return undefined;
      if (!started) throw new Error(`${name}: it starts in beforeAll, so read .${key} in a test or hook`);
      const value = Reflect.get(started.value, key);
      return typeof value === "function" ? value.bind(started.value) : value;
    },
  });
}

/** A stack (startStack) for the calling file: started in its beforeAll, stopped in its afterAll. */
export function useStack(opts: StackOptions = {}): Stack {
  return perFile("useStack()", async () => {
    const stack = await startStack(opts);
    return { value: stack, stop: () => stack.stop() };
  });
}
