/** stack.crash() is kill -9 of a server subprocess; an in-process stack refuses it rather than stop gracefully. */
import { expect, test } from "bun:test";
import { useStack } from "../support/per-file.ts";

const stack = useStack();

test("crash() on an in-process stack throws a clear error and leaves the server running", async () => {
  await expect(stack.crash()).rejects.toThrow(
    "stack.crash() needs a subprocess stack (startStack({ subprocess: true }))",
  );
  expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
});
