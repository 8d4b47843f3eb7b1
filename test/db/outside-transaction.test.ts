/**
 * No network call inside a database transaction (ARCHITECTURE.md, the database layer): the chain
 * clients' transport refuses an RPC made inside one, before anything is sent, and makes it as
 * usual outside one. A local HTTP server stands in for the node and counts what reaches it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createChainClients } from "../../src/chain/client.ts";
import { sql } from "../../src/db/engine.ts";
import { openTestStore, type TestStore } from "../support/store-engines.ts";

const RELAYER_KEY = `0x${"11".repeat(32)}` as const;
let node: ReturnType<typeof Bun.serve>;
let calls = 0;
let store: TestStore;

beforeAll(async () => {
  node = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      calls++;
      const { id } = (await request.json()) as { id: number };
      return Response.json({ jsonrpc: "2.0", id, result: "0x2a" });
    },
  });
  store = await openTestStore("sqlite");
});
afterAll(async () => {
  node.stop(true);
  await store.close();
});

test("an RPC call inside a transaction is refused before it is sent; outside one it goes through", async () => {
  const { publicClient } = createChainClients(
    { name: "custom", chainId: 31337, rpcUrl: `http://127.0.0.1:${node.port}`, pollIntervalMs: 1_000 },
    RELAYER_KEY,
  );
  await expect(
    store.db.transaction(async () => {
      await store.db.run(sql`SELECT 1`);
      return publicClient.getBlockNumber();
    }),
  ).rejects.toThrow("an RPC call inside a database transaction");
  expect(calls).toBe(0);
  expect(await publicClient.getBlockNumber()).toBe(42n);
  expect(calls).toBe(1);
});
