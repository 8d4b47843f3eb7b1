/**
 * Payment events: the payment they carry, which endpoints get them, and GET /api/v1/events.
 * Payments expire after 1 s here, which gives payment events without a chain. Setup:
 * test/support/webhook-delivery.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createChainStore } from "../../src/chain/store.ts";
import { createLedger } from "../../src/chain/watching/ledger.ts";
import { sql } from "../../src/db/engine.ts";
import { createEventStore } from "../../src/events/store.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createLifecycle } from "../../src/payments/lifecycle.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { isErrorBody } from "../support/server.ts";
import { waitFor, webhookWorkerRanSince } from "../support/wait.ts";
import {
  deliveries,
  deliveryRig,
  expectSigned,
  lastHit,
  type Merchant,
  register,
} from "../support/webhook-delivery.ts";

const rig = deliveryRig();
const { merchant, newHook, pastFirstRetry } = rig;

/** The exact text of `data.payment` in an event body: `{...,"data":{"payment":<text>}}`. */
function rawPayment(body: string): string {
  const marker = `"data":{"payment":`;
  const at = body.indexOf(marker);
  expect(at).toBeGreaterThan(0);
  expect(body.endsWith("}}")).toBe(true);
  return body.slice(at + marker.length, -2);
}

describe("payment events", () => {
  test("data.payment is the payment exactly as GET returns it at that moment, metadata untouched", async () => {
    const m = await merchant("Payments");
    const hook = newHook();
    const endpoint = await register(m, hook.url);
    // Key order, escapes and string contents the server must keep byte for byte; only the
    // whitespace between tokens goes (docs/api.md: metadata).
    const metadataText = `{ "zeta" : "last",\n  "alpha": "caf\\u00e9 \\"quoted\\"", "emoji": "😀", "n": "007" }`;
    const storedMetadata = `{"zeta":"last","alpha":"caf\\u00e9 \\"quoted\\"","emoji":"😀","n":"007"}`;
    const created = await m.api("/api/v1/payments", {
      body: `{"amount":"12.50","reference":"order-9","metadata":${metadataText}}`,
    });
    expect(created.status).toBe(201);
    const id: string = created.json.id;

    // The expiry loop moves it to expired: a payment.expired event.
    const expiredHit = await waitFor(
      () => hook.hits.find((h) => JSON.parse(h.body).type === "payment.expired"),
      5_000,
      "payment.expired",
    );
    const atExpiry = await m.api(`/api/v1/payments/${id}`);
    expect(atExpiry.status).toBe(200);
    expectSigned(expiredHit, endpoint.secret);
    const expiredEvent = JSON.parse(expiredHit.body);
    expect(Object.keys(expiredEvent)).toEqual(["id", "object", "type", "created_at", "data"]);
    expect(Object.keys(expiredEvent.data)).toEqual(["payment"]);
    expect(expiredHit.id).toBe(expiredEvent.id);
    const expiredText = rawPayment(expiredHit.body);
    expect(expiredText).toBe(atExpiry.text);
    expect(expiredText).toContain(`"metadata":${storedMetadata}}`);
    expect(JSON.parse(expiredText).metadata).toEqual(JSON.parse(metadataText));

    // Late funds to the deposit address, through the same ledger and lifecycle the watcher uses:
    // the payment becomes underpaid and the expired event's copy is now out of date.
    const db = rig.server.running.db;
    const payments = createPaymentStore(db);
    const chain = createChainStore(db);
    const lifecycle = createLifecycle({
      payments,
      chain,
      events: createEventStore(db, randomIds),
      clock: systemClock,
      ids: randomIds,
      view: { baseUrl: rig.server.config.baseUrl, chainName: rig.server.config.chain.name },
    });
    const ledger = createLedger({ chain, payments, lifecycle, clock: systemClock });
    const credited = await db.transaction(async () =>
      ledger.record(
        {
          chainId: rig.server.config.chain.chainId,
          txHash: `0x${"ab".repeat(32)}`,
          logIndex: 3,
          from: "0x2222222222222222222222222222222222222222",
          to: created.json.deposit_address,
          amount: 4_250_000n,
          blockNumber: 42,
          blockHash: `0x${"cd".repeat(32)}`,
        },
        () => true,
      ),
    );
    expect(credited).toBe(true);

    const underpaidHit = await waitFor(
      () => hook.hits.find((h) => JSON.parse(h.body).type === "payment.underpaid"),
      3_000,
      "payment.underpaid",
    );
    const now = await m.api(`/api/v1/payments/${id}`);
    expectSigned(underpaidHit, endpoint.secret);
    expect(rawPayment(underpaidHit.body)).toBe(now.text);
    expect(now.json).toMatchObject({ status: "underpaid", amount_received: "4.25" });

    // The expired event still matches the payment except where it changed since, and there it
    // holds the event's own state.
    const then = JSON.parse(expiredText);
    const changed = Object.keys(now.json).filter((k) => JSON.stringify(now.json[k]) !== JSON.stringify(then[k]));
    expect(changed.sort()).toEqual(["amount_received", "status", "transfers", "updated_at"]);
    expect(Object.keys(then)).toEqual(Object.keys(now.json));
    expect(then).toMatchObject({ status: "expired", amount_received: null, transfers: [] });
    expect(`payment.${then.status}`).toBe(expiredEvent.type);
    expect(Date.parse(then.updated_at)).toBeLessThanOrEqual(Date.parse(expiredEvent.created_at));

    // Both events reached this endpoint exactly once.
    await pastFirstRetry(lastHit(hook));
    expect(hook.hits.map((h) => JSON.parse(h.body).type).sort()).toEqual(["payment.expired", "payment.underpaid"]);
    const list = await deliveries(m, endpoint);
    expect(list.map((d) => d.event_type).sort()).toEqual(["payment.expired", "payment.underpaid"]);
    for (const d of list) expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
  });

  test("an event goes to every live endpoint of the account and to no other account", async () => {
    const m = await merchant("Fanout");
    const other = await merchant("Bystander");
    const hooksOfM = [newHook(), newHook(), newHook()];
    const endpoints = await Promise.all(hooksOfM.map((h) => register(m, h.url)));
    const otherHook = newHook();
    await register(other, otherHook.url);
    const deleted = newHook();
    const deletedEndpoint = await register(m, deleted.url);
    expect((await m.api(`/api/v1/webhook_endpoints/${deletedEndpoint.id}`, { method: "DELETE" })).status).toBe(200);

    expect((await m.api("/api/v1/payments", { body: { amount: "3.00" } })).status).toBe(201);
    await waitFor(() => hooksOfM.every((h) => h.hits.length === 1), 5_000, "the event at every endpoint");
    const ids = new Set(hooksOfM.map((h) => h.hits[0]!.id));
    expect(ids.size).toBe(1); // one event, one webhook-id, whichever endpoint gets it
    hooksOfM.forEach((h, i) => {
      expectSigned(h.hits[0]!, endpoints[i]!.secret);
    });
    await webhookWorkerRanSince(rig.server.running);
    expect(otherHook.hits).toHaveLength(0);
    expect(deleted.hits).toHaveLength(0);
  });
});

describe("GET /api/v1/events", () => {
  let m: Merchant;
  let other: Merchant;

  beforeAll(async () => {
    m = await merchant("Ledger");
    other = await merchant("Neighbour");
    for (let i = 0; i < 5; i++)
      expect((await m.api("/api/v1/payments", { body: { amount: `${i + 1}.00` } })).status).toBe(201);
    for (let i = 0; i < 2; i++)
      expect((await other.api("/api/v1/payments", { body: { amount: "9.00" } })).status).toBe(201);
    const count = async (accountId: string) =>
      (await rig.server.running.db.get<{ n: number }>(
        sql`SELECT count(*) AS n FROM events WHERE account_id = ${accountId} AND type = 'payment.expired'`,
      ))!.n;
    await waitFor(
      async () => (await count(m.accountId)) === 5 && (await count(other.accountId)) === 2,
      5_000,
      "the payments to expire",
    );
  });

  test("newest first, paginated with starting_after, every event once", async () => {
    const expected = (
      await rig.server.running.db.all<{ id: string }>(
        sql`SELECT id FROM events WHERE account_id = ${m.accountId} AND type != 'test' ORDER BY seq DESC`,
      )
    ).map((r) => r.id);
    expect(expected).toHaveLength(5);

    const seen: any[] = [];
    const pages: boolean[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await m.api(`/api/v1/events?limit=2${cursor ? `&starting_after=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.json.object).toBe("list");
      expect(res.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.data);
      pages.push(res.json.has_more);
      if (!res.json.has_more) break;
      cursor = res.json.data.at(-1).id;
    }
    expect(pages).toEqual([true, true, false]);
    expect(seen.map((e) => e.id)).toEqual(expected);
    for (let i = 1; i < seen.length; i++)
      expect(Date.parse(seen[i - 1].created_at)).toBeGreaterThanOrEqual(Date.parse(seen[i].created_at));
    for (const e of seen) {
      expect(Object.keys(e)).toEqual(["id", "object", "type", "created_at", "data"]);
      expect(e.type).toBe("payment.expired");
    }
  });

  test("never another account's events, by list, by id or as a cursor", async () => {
    const mine = (await m.api("/api/v1/events?limit=100")).json.data.map((e: { id: string }) => e.id);
    const theirs = (await other.api("/api/v1/events?limit=100")).json.data.map((e: { id: string }) => e.id);
    expect(mine).toHaveLength(5);
    expect(theirs).toHaveLength(2);
    expect(mine.filter((id: string) => theirs.includes(id))).toEqual([]);
    const theirPayments = new Set(
      (await other.api("/api/v1/payments?limit=100")).json.data.map((p: { id: string }) => p.id),
    );
    for (const e of (await m.api("/api/v1/events?limit=100")).json.data)
      expect(theirPayments.has(e.data.payment.id)).toBe(false);

    const byId = await m.api(`/api/v1/events/${theirs[0]}`);
    expect(byId.status).toBe(404);
    expect(isErrorBody(byId.json)).toBe(true);
    expect((await other.api(`/api/v1/events/${theirs[0]}`)).status).toBe(200);
    const asCursor = await m.api(`/api/v1/events?starting_after=${theirs[0]}`);
    expect(asCursor.status).toBe(400);
    expect(asCursor.text).not.toContain(theirs[1]);
  });
});
