/**
 * `stablegate account set-payout` against a running server's data dir: new payments commit to
 * the new address while existing ones keep theirs, and the change is an `account.updated` event
 * that the events API lists and the webhook worker delivers like any other.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { sql } from "../../src/db/engine.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { api, startTestServer, TEST_PAYOUT, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

const NEW_PAYOUT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ webhookAllowPrivate: true });
  receiver = startReceiver();
});
afterAll(async () => {
  receiver.stop();
  await server.stop();
});

const setPayout = async (accountId: string, address: string) =>
  (await runAccountCommand("account", ["set-payout", accountId, address], server.env)) as { payout_address: string };

const payoutOf = async (paymentId: string) =>
  (await server.running.db.get<{ payout_address: string }>(
    sql`SELECT payout_address FROM payments WHERE id = ${paymentId}`,
  ))!.payout_address;

describe("account set-payout", () => {
  test("new payments pay out to the new address; existing ones keep the one in their deposit address", async () => {
    const merchant = await server.createAccount("Moving Shop");
    const call = api(server.url, merchant.apiKey);
    const before = await call("/api/v1/payments", { body: { amount: "5.00" } });
    expect((await setPayout(merchant.accountId, NEW_PAYOUT.toLowerCase())).payout_address).toBe(NEW_PAYOUT);
    const after = await call("/api/v1/payments", { body: { amount: "5.00" } });
    expect([before.status, after.status]).toEqual([201, 201]);
    expect(await payoutOf(before.json.id)).toBe(TEST_PAYOUT);
    expect(await payoutOf(after.json.id)).toBe(NEW_PAYOUT);
    // The deposit address commits to the payout address, so the old payment's is unchanged too.
    expect((await call(`/api/v1/payments/${before.json.id}`)).json.deposit_address).toBe(before.json.deposit_address);
  });

  test("the change is an account.updated event with the old and new address, listed and sent as a webhook", async () => {
    const merchant = await server.createAccount("Evented Shop");
    const call = api(server.url, merchant.apiKey);
    const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: receiver.url } });
    expect(endpoint.status).toBe(201);
    await setPayout(merchant.accountId, NEW_PAYOUT);

    const listed = await call("/api/v1/events?type=account.updated");
    expect(listed.status).toBe(200);
    expect(listed.json.data).toHaveLength(1);
    const event = listed.json.data[0];
    expect(event).toMatchObject({
      object: "event",
      type: "account.updated",
      data: {
        account: { id: merchant.accountId, payout_address: NEW_PAYOUT },
        previous_attributes: { payout_address: TEST_PAYOUT },
      },
    });
    expect((await call(`/api/v1/events/${event.id}`)).json).toEqual(event);

    const hit = await waitFor(
      () => receiver.hits.find((h) => h.id === event.id),
      15_000,
      "the account.updated webhook",
    );
    expect(JSON.parse(hit.body)).toEqual(event);
    const deliveries = await call(`/api/v1/webhook_endpoints/${endpoint.json.id}/deliveries`);
    expect(deliveries.json.data[0]).toMatchObject({ event_id: event.id, event_type: "account.updated" });
  });

  test("setting the address it already has changes nothing and records no event", async () => {
    const merchant = await server.createAccount("Steady Shop");
    expect((await setPayout(merchant.accountId, TEST_PAYOUT)).payout_address).toBe(TEST_PAYOUT);
    const listed = await api(server.url, merchant.apiKey)("/api/v1/events");
    expect(listed.json.data).toEqual([]);
  });

  test("a mixed-case address with a bad checksum, the zero address or an unknown account change nothing", async () => {
    const merchant = await server.createAccount("Careful Shop");
    const badChecksum = NEW_PAYOUT.replace("C51812dc", "c51812dC");
    await expect(setPayout(merchant.accountId, badChecksum)).rejects.toThrow("wrong EIP-55 checksum");
    await expect(setPayout(merchant.accountId, `0x${"0".repeat(40)}`)).rejects.toThrow("zero address");
    await expect(setPayout(merchant.accountId, "0x1234")).rejects.toThrow("20-byte address");
    await expect(setPayout("acct_nope", NEW_PAYOUT)).rejects.toThrow("no account acct_nope");
    const shown = (await runAccountCommand("account", ["show", merchant.accountId], server.env)) as {
      payout_address: string;
    };
    expect(shown.payout_address).toBe(TEST_PAYOUT);
    expect((await api(server.url, merchant.apiKey)("/api/v1/events")).json.data).toEqual([]);
  });
});
