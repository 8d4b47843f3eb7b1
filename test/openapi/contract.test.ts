/**
 * The OpenAPI contract, against the real server on a real anvil: every documented operation is
 * called for its success and its refusals, and every real answer (status, content type, headers,
 * body) must be one the document served at `GET /openapi.json` declares. Payments paid on chain
 * (confirmed, underpaid, overpaid, paid again, failed) and expired, their events and their real
 * webhook deliveries are held to the document too. Coverage per operation is printed at the end; declared
 * statuses no scenario reaches are listed there with the reason.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { parseExactAmount } from "../../src/lib/money.ts";
import { testTokenAbi } from "../support/chain.ts";
import { type Contract, loadContract } from "../support/openapi-contract.ts";
import { declaredStatuses } from "../support/openapi-document.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { api, startTestServer } from "../support/server.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { randomAddress } from "../support/test-chain.ts";
import { DOCUMENT_SCENARIOS } from "./document-scenarios.ts";
import { MERCHANT_SCENARIOS } from "./merchant-scenarios.ts";
import { PUBLIC_SCENARIOS } from "./public-scenarios.ts";
import { REFUND_SCENARIOS } from "./refund-scenarios.ts";
import { answerGoneWhenAsked, createOwned, received, type World } from "./world.ts";
import { X402_SCENARIOS } from "./x402-scenarios.ts";

const SCENARIOS = {
  ...MERCHANT_SCENARIOS,
  ...REFUND_SCENARIOS,
  ...DOCUMENT_SCENARIOS,
  ...PUBLIC_SCENARIOS,
  ...X402_SCENARIOS,
};

let world: World;
let contract: Contract;
let stack: Stack;
let receiver: Receiver;
const stops: Array<() => unknown> = [];

beforeAll(async () => {
  receiver = startReceiver();
  receiver.answer = answerGoneWhenAsked;
  stops.push(() => receiver.stop());
  stack = await startStack({ env: { STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" } });
  stops.push(() => stack.stop());
  // Its payments expire after a second, which gives payment.expired without moving the chain server's clock.
  const chainlessServer = await startTestServer({ webhookAllowPrivate: true, paymentWindowMs: 1_000 });
  stops.push(() => chainlessServer.stop());
  contract = await loadContract(stack.url);
  const account = await chainlessServer.createAccount("Chainless Shop");
  const payment = await api(chainlessServer.url, account.apiKey)("/api/v1/payments", { body: { amount: "1.00" } });
  const key = stack.apiKey;
  // Every endpoint the tests register points at the receiver, so it sees every event the account sends.
  const owned = await createOwned(contract, key, receiver.url);
  let paid: Promise<any> | undefined;
  world = {
    contract,
    stack,
    key,
    receiver,
    chainless: { server: chainlessServer, account, paymentId: payment.json.id },
    owned,
    fresh: () => createOwned(contract, key, receiver.url),
    newPayment: async () => (await contract.call("POST /api/v1/payments", { key, body: { amount: "2.00" } })).json,
    paid: () => (paid ??= payInFull()),
  };
}, 60_000);

afterAll(async () => {
  if (contract) console.log(coverageReport());
  for (const stop of stops.reverse()) await stop();
});

/** A payment paid in full on anvil, confirmed and settled, with the hash of the payer's transfer. */
async function payInFull() {
  const payment = await stack.createPayment({ amount: "5.00", description: "paid on anvil", metadata: { k: "v" } });
  const txHash = await stack.pay(payment.deposit_address, 5_000_000n);
  const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
  return { ...confirmed, txHash };
}

describe("every documented operation, called on the real server", () => {
  test("each operation in the document has a scenario here, and each scenario an operation", () => {
    expect([...contract.operations.keys()].sort()).toEqual(Object.keys(SCENARIOS).sort());
  });

  for (const [op, scenario] of Object.entries(SCENARIOS)) {
    test(`${op}: every answer is declared, every declared status and parameter exercised`, async () => {
      await scenario.run(world);
      const declared = declaredStatuses(contract.operations.get(op)!.operation);
      const exercised = contract.exercised(op);
      const unreachable = Object.keys(scenario.unreachable ?? {}).map(Number);
      expect({ op, notExercised: declared.filter((s) => !exercised.includes(s) && !unreachable.includes(s)) }).toEqual({
        op,
        notExercised: [],
      });
      // And every parameter it documents was sent in a request the server accepted.
      const notSent = contract.parametersNotSent(op).filter((name) => !(name in (scenario.unsentParameters ?? {})));
      expect({ op, notSent }).toEqual({ op, notSent: [] });
      // A status listed as unreachable that a scenario reached after all: the list is stale.
      expect({ op, reachedAfterAll: unreachable.filter((s) => exercised.includes(s)) }).toEqual({
        op,
        reachedAfterAll: [],
      });
    }, 120_000);
  }
});

describe("a payment confirmed on anvil", () => {
  test("validates as the merchant API, the public view, the list and its events show it", async () => {
    const paid = await world.paid();
    const key = world.key;
    const merchant = await contract.call("GET /api/v1/payments/{id}", { key, params: { id: paid.id } });
    expect({ status: merchant.status, state: merchant.json.status, transfers: merchant.json.transfers.length }).toEqual(
      {
        status: 200,
        state: "confirmed",
        transfers: 1,
      },
    );
    const view = await contract.call("GET /api/public/payments/{id}", { params: { id: paid.id } });
    expect({ status: view.status, incoming: view.json.incoming_transfers.length }).toEqual({
      status: 200,
      incoming: 1,
    });
    const list = await contract.call("GET /api/v1/payments", { key, query: { status: "confirmed" } });
    expect(list.json.data.map((p: any) => p.id)).toContain(paid.id);
    const events = await contract.call("GET /api/v1/events", { key, query: { type: "payment.confirmed" } });
    const event = events.json.data.find((e: any) => e.data.payment.id === paid.id);
    expect(event.data.payment.transfers.length).toBe(1);
    const one = await contract.call("GET /api/v1/events/{id}", { key, params: { id: event.id } });
    expect(one.json.data.payment.status).toBe("confirmed");
  }, 60_000);
});

describe("webhooks", () => {
  test("real deliveries, a test event and a confirmed payment's events, validate against the documented webhooks", async () => {
    const paid = await world.paid();
    await received(
      world,
      (body) => body.type === "payment.confirmed" && body.data.payment.id === paid.id,
      "payment.confirmed",
    );
    await received(world, (body) => body.type === "test", "a test event");
    const types = new Set<string>();
    for (const hit of receiver.hits) {
      expect({ hit: hit.id, problems: contract.problemsWithWebhook(hit) }).toEqual({ hit: hit.id, problems: [] });
      types.add(JSON.parse(hit.body).type);
    }
    expect([...types]).toEqual(expect.arrayContaining(["test", "payment.settling", "payment.confirmed"]));
  }, 60_000);
});

describe("every event a payment on anvil and an account can send", () => {
  test("underpaid, overpaid, funds received after confirmation and an account's new payout address validate as deliveries and in the events API", async () => {
    const under = await stack.createPayment({ amount: "2.00" });
    const over = await stack.createPayment({ amount: "2.00" });
    const late = await stack.createPayment({ amount: "1.00" });
    await stack.pay(under.deposit_address, 1_000_000n);
    await stack.pay(over.deposit_address, 3_000_000n);
    await stack.pay(late.deposit_address, 1_000_000n);
    await stack.waitForStatus(under.id, "underpaid", { mine: true });
    await stack.waitForStatus(over.id, "confirmed", { mine: true });
    await stack.waitForStatus(late.id, "confirmed", { mine: true });
    await stack.pay(late.deposit_address, 500_000n);
    await runAccountCommand("account", ["set-payout", stack.accountId, randomAddress()], stack.env);

    const isEvent = (type: string, paymentId?: string) => (body: any) =>
      body.type === type && (paymentId === undefined || body.data.payment?.id === paymentId);
    await received(world, isEvent("payment.underpaid", under.id), "payment.underpaid");
    await received(world, isEvent("payment.overpaid", over.id), "payment.overpaid");
    await stack.mineUntil(
      () => receiver.hits.some((hit) => isEvent("payment.funds_received", late.id)(JSON.parse(hit.body))),
      20_000,
      "payment.funds_received",
    );
    await received(world, isEvent("account.updated"), "account.updated");
    for (const hit of receiver.hits)
      expect({ hit: hit.id, problems: contract.problemsWithWebhook(hit) }).toEqual({ hit: hit.id, problems: [] });

    const events = await contract.call("GET /api/v1/events", { key: world.key, query: { limit: "100" } });
    const types = events.json.data.map((e: any) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(["payment.underpaid", "payment.overpaid", "payment.funds_received", "account.updated"]),
    );
  }, 90_000);
});

describe("a refund of a payment paid on anvil", () => {
  test("its refund.created, refund.payable and refund.canceled validate as deliveries and in the events API", async () => {
    const paid = await world.paid();
    const key = world.key;
    const refundedBefore = (await contract.call("GET /api/v1/payments/{id}", { key, params: { id: paid.id } })).json
      .amount_refunded;
    const created = await contract.call("POST /api/v1/payments/{id}/refunds", {
      key,
      params: { id: paid.id },
      body: { amount: "0.25", refund_address: randomAddress(), metadata: { rma: "7" } },
    });
    expect(created.json.status).toBe("awaiting_payment");
    const refundId = created.json.id;
    await contract.call("POST /api/v1/refunds/{id}/cancel", { key, params: { id: refundId } });
    for (const type of ["refund.created", "refund.payable", "refund.canceled"]) {
      const hit = await received(world, (body) => body.type === type && body.data.refund.id === refundId, type);
      expect({ type, problems: contract.problemsWithWebhook(hit) }).toEqual({ type, problems: [] });
    }
    const events = await contract.call("GET /api/v1/events", { key, query: { type: "refund.payable" } });
    const event = events.json.data.find((e: any) => e.data.refund.id === refundId);
    expect(event.data.refund.payment_instructions.amount).toBe("0.25");
    // The payment's own object: amount_refunded counts succeeded refunds only, so a canceled one
    // leaves it as it was (another scenario here may have paid one of this payment's refunds).
    const payment = await contract.call("GET /api/v1/payments/{id}", { key, params: { id: paid.id } });
    expect({ status: payment.json.status, refunded: payment.json.amount_refunded }).toEqual({
      status: "confirmed",
      refunded: refundedBefore,
    });
  }, 60_000);
});

describe("a refund paid on anvil", () => {
  test("the merchant's transfer makes it succeeded: refund.succeeded and the payment's amount_refunded validate", async () => {
    const paid = await world.paid();
    const key = world.key;
    const to = randomAddress();
    const created = await contract.call("POST /api/v1/payments/{id}/refunds", {
      key,
      params: { id: paid.id },
      body: { amount: "0.30", refund_address: to },
    });
    const refundId = created.json.id;
    const before = (await contract.call("GET /api/v1/payments/{id}", { key, params: { id: paid.id } })).json;
    // The merchant's own transfer, exactly as payment_instructions say.
    const txHash = await stack.pay(created.json.payment_instructions.to, 300_000n);
    const succeeded = await stack.mineUntil(
      async () => {
        const res = await contract.call("GET /api/v1/refunds/{id}", { key, params: { id: refundId } });
        return res.json.status === "succeeded" ? res : undefined;
      },
      30_000,
      "the refund to succeed",
    );
    expect({ tx: succeeded.json.tx_hash, block: typeof succeeded.json.block_number }).toEqual({
      tx: txHash,
      block: "number",
    });
    const hit = await received(
      world,
      (body) => body.type === "refund.succeeded" && body.data.refund.id === refundId,
      "refund.succeeded",
    );
    expect(contract.problemsWithWebhook(hit)).toEqual([]);
    const after = (await contract.call("GET /api/v1/payments/{id}", { key, params: { id: paid.id } })).json;
    // This refund's 0.30 comes on top of what the payment's refunds had paid back before.
    expect(parseExactAmount(after.amount_refunded)! - parseExactAmount(before.amount_refunded)!).toBe(300_000n);
    expect(after.status).toBe("confirmed");
  }, 60_000);
});

describe("a failed payment", () => {
  test("a settlement that reverts (USDC blocks the payout address) validates as failed, and so does its payment.failed delivery", async () => {
    // An account of its own, so blocking its payout address touches no other payment here.
    const payout = randomAddress();
    const created = await runAccountCommand(
      "account",
      ["create", "--name", "Blocked Shop", "--payout-address", payout],
      stack.env,
    );
    const key = (created as { api_key: string }).api_key;
    const { publicClient, deployer, usdc: token } = stack.chain;
    const blocked = await deployer.writeContract({
      address: token,
      abi: testTokenAbi,
      functionName: "setBlocked",
      args: [payout, true],
    });
    await publicClient.waitForTransactionReceipt({ hash: blocked });
    await contract.call("POST /api/v1/webhook_endpoints", { key, body: { url: `${receiver.url}?blocked=1` } });
    const payment = (await contract.call("POST /api/v1/payments", { key, body: { amount: "1.00" } })).json;
    await stack.pay(payment.deposit_address, 1_000_000n);
    const failed = await stack.mineUntil(
      async () => {
        const res = await contract.call("GET /api/v1/payments/{id}", { key, params: { id: payment.id } });
        return res.json.status === "failed" ? res : undefined;
      },
      30_000,
      "the settlement to revert",
    );
    expect(failed.json.amount_received).toBe("1.00");
    const hit = await received(
      world,
      (body) => body.type === "payment.failed" && body.data.payment.id === payment.id,
      "payment.failed",
    );
    expect(contract.problemsWithWebhook(hit)).toEqual([]);
  }, 60_000);
});

describe("an expired payment", () => {
  test("validates, and so does its payment.expired delivery", async () => {
    const { server, account } = world.chainless;
    const key = account.apiKey;
    await contract.call("POST /api/v1/webhook_endpoints", {
      baseUrl: server.url,
      key,
      body: { url: `${receiver.url}?chainless=1` },
    });
    const created = await contract.call("POST /api/v1/payments", {
      baseUrl: server.url,
      key,
      body: { amount: "1.00" },
    });
    const id = created.json.id;
    const expired = await stack.waitFor(
      async () => {
        const res = await contract.call("GET /api/v1/payments/{id}", { baseUrl: server.url, key, params: { id } });
        return res.json.status === "expired" ? res : undefined;
      },
      15_000,
      "the payment to expire",
    );
    expect(expired.status).toBe(200);
    const hit = await received(
      world,
      (body) => body.type === "payment.expired" && body.data.payment.id === id,
      "payment.expired",
    );
    expect(contract.problemsWithWebhook(hit)).toEqual([]);
  }, 30_000);
});

/**
 * Per operation: the statuses it declares, those the scenarios exercised, and why any were not;
 * and the documented parameters no accepted request carried.
 */
function coverageReport(): string {
  const lines = ["OpenAPI contract coverage (declared statuses; * = exercised):"];
  for (const [op, { operation }] of contract.operations) {
    const exercised = contract.exercised(op);
    const reasons = SCENARIOS[op]?.unreachable ?? {};
    const statuses = declaredStatuses(operation).map((s) => (exercised.includes(s) ? `${s}*` : String(s)));
    const gaps = declaredStatuses(operation)
      .filter((s) => !exercised.includes(s))
      .map((s) => `${s}: ${reasons[s] ?? "not exercised in this run"}`);
    lines.push(`  ${op.padEnd(72)} ${statuses.join(" ")}`);
    for (const gap of gaps) lines.push(`      not exercised ${gap}`);
    const unsent = SCENARIOS[op]?.unsentParameters ?? {};
    for (const name of contract.parametersNotSent(op))
      lines.push(`      never accepted with ${name}: ${unsent[name] ?? "not sent in this run"}`);
  }
  return lines.join("\n");
}
