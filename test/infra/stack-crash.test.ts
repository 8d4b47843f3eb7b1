/** stack.crash() is kill -9 of a server subprocess; an in-process stack refuses it rather than stop gracefully. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Stack, startStack } from "../support/stack.ts";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());

test("crash() on an in-process stack throws a clear error and leaves the server running", async () => {
  await expect(stack.crash()).rejects.toThrow(
    "stack.crash() needs a subprocess stack (startStack({ subprocess: true }))",
  );
  expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
});
