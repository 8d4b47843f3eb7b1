/**
 * How many sends the worker has in flight to one endpoint: the worker itself over a real SQLite
 * file, sending real HTTP to a local receiver that holds every request open.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { sql } from "../../src/db/engine.ts";
import { createGroupCommit } from "../../src/db/group-commit.ts";
import { type Db, openDb } from "../../src/db/index.ts";
import { createEventStore } from "../../src/events/store.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createDeliveryStore } from "../../src/webhooks/delivery-store.ts";
import { createWebhookStore } from "../../src/webhooks/store.ts";
import { createWebhookWorker } from "../../src/webhooks/worker.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { makeTempDir } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

/** The number docs/webhooks.md promises under Delivery. */
const PER_ENDPOINT = 4;

let dataDir: string;
let db: Db;
let receiver: Receiver;
const held: Array<() => void> = [];

beforeAll(() => {
  dataDir = makeTempDir();
  db = openDb(dataDir);
  receiver = startReceiver();
  receiver.answer = () => new Promise<Response>((resolve) => held.push(() => resolve(new Response("ok"))));
});

afterAll(async () => {
  receiver?.stop();
  await db?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test(`at most ${PER_ENDPOINT} sends are in flight to one endpoint, however many are due`, async () => {
  const now = systemClock.now();
  await db.run(
    sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at)
        VALUES ('acct_busy', 'Busy', ${"0x1111111111111111111111111111111111111111"}, NULL, ${now})`,
  );
  await createWebhookStore(db).insertEndpoint({
    id: "we_slow",
    account_id: "acct_busy",
    url: receiver.url,
    secret: randomIds.webhookSecret(),
    created_at: now,
  });
  const events = createEventStore(db, randomIds);
  for (let i = 0; i < 3 * PER_ENDPOINT; i++) {
    const id = randomIds.prefixed("evt");
    await events.insert({
      id,
      account_id: "acct_busy",
      type: "test",
      payment_id: null,
      payload: JSON.stringify({ id }),
      created_at: now,
    });
  }

  const worker = createWebhookWorker({
    store: createDeliveryStore(db),
    claimer: "the test",
    groupCommit: createGroupCommit(db),
    clock: systemClock,
    log: silentLogger,
    allowPrivate: true,
    timeoutMs: 60_000,
  });
  expect(await worker.tick()).toBe(PER_ENDPOINT);
  await waitFor(() => receiver.hits.length === PER_ENDPOINT, 10_000, "the first sends to reach the receiver");
  expect(await worker.tick()).toBe(0);

  // Each answered send frees one slot, and only one.
  held.shift()!();
  await waitFor(async () => (await worker.tick()) === 1 || undefined, 10_000, "a slot to come free");
  expect(await worker.tick()).toBe(0);

  // Answer everything still held, then let the worker finish what it started.
  receiver.answer = () => new Response("ok");
  for (const release of held.splice(0)) release();
  const stopped = new AbortController();
  stopped.abort();
  await worker.run(stopped.signal);
});
