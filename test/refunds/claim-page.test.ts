/**
 * The payer's claim page, /refund/<token>, over real HTTP against the real server: what it shows
 * and never shows, its headers, the claim that fixes the address (with the refund.payable event),
 * refusals that re-render the form and change nothing, a second claim, a canceled refund, the
 * states after the address, and the per-client and per-refund limits. Each payer connects from a
 * loopback address of its own; the browser's view: browser-claim.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { raw, sql } from "../../src/db/engine.ts";
import { createLogger } from "../../src/lib/log.ts";
import { READ_LIMIT } from "../../src/rate-limits/index.ts";
import { CLAIM_CLIENT_LIMIT, CLAIM_REFUND_LIMIT } from "../../src/refunds/claim-routes.ts";
import { fetchFrom } from "../support/forwarding-proxy.ts";
import { markReceived } from "../support/refund-rows.ts";
import { type Api, api, startTestServer, TEST_PAYOUT, type TestServer } from "../support/server.ts";

// Stopped: the rate limits' buckets refill only when a test moves it.
const clock = { at: Date.parse("2031-05-01T10:00:00.000Z"), now: () => clock.at };

let server: TestServer;
let merchant: Api;
let accountId: string;

const PAYER = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const OTHER = "0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B";
// What the merchant keeps to themselves: none of it may reach the payer's page.
const SECRETS = ["PRIVATE-REASON-4242", "SECRET-REFUND-META", "SECRET-PAYMENT-META", "hidden-payer@example.test"];

beforeAll(async () => {
  server = await startTestServer({}, { clock });
  const account = await server.createAccount("Bean & Leaf <Roasters>");
  accountId = account.accountId;
  merchant = api(server.url, account.apiKey);
});
afterAll(() => server.stop());

let payers = 0;
/** A payer of its own: a loopback address no other request of this file comes from. */
const newPayer = () => `127.0.${Math.floor(++payers / 250) + 1}.${(payers % 250) + 1}`;

interface Refund {
  id: string;
  status: string;
  refund_address: string | null;
  payment_instructions: Record<string, unknown> | null;
  claim_url: string;
}

/** A refund of a paid payment, waiting for the payer's address; `path` is its claim link's. */
async function newRefund(): Promise<{ refund: Refund; path: string; payment: string }> {
  const created = await merchant("/api/v1/payments", {
    body: {
      amount: "25.00",
      description: "Espresso machine",
      reference: "ORDER-1188",
      invoice_number: "INV-2031-07",
      customer_email: "hidden-payer@example.test",
      metadata: { note: "SECRET-PAYMENT-META" },
    },
  });
  expect(created.status).toBe(201);
  const payment = created.json.id as string;
  await markReceived(server.env, payment, 25_000_000n);
  const res = await merchant(`/api/v1/payments/${payment}/refunds`, {
    body: { amount: "12.50", reason: "PRIVATE-REASON-4242", metadata: { ticket: "SECRET-REFUND-META" } },
  });
  expect(res.status).toBe(201);
  const refund = res.json as Refund;
  return { refund, path: new URL(refund.claim_url).pathname, payment };
}

const open = (path: string, from = newPayer()) => fetchFrom(from, server.url + path);

/** Posts the claim form as a browser does (urlencoded, redirects not followed). */
const claim = (path: string, fields: Record<string, string>, from = newPayer()) =>
  fetchFrom(from, server.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });

const refundOf = async (id: string) => (await merchant(`/api/v1/refunds/${id}`)).json as Refund;
const payableEventsOf = async (id: string) =>
  ((await merchant("/api/v1/events?type=refund.payable")).json.data as Array<{ data: { refund: Refund } }>).filter(
    (e) => e.data.refund.id === id,
  );
/** The value the form gives back in its address field. */
const typedIn = (page: string) => /name="refund_address"[^>]*value="([^"]*)"/.exec(page)?.[1];

describe("GET /refund/:token", () => {
  test("shows the merchant, the amount, the chain and the payment, with the claim form", async () => {
    const { path } = await newRefund();
    const res = await open(path);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<span id="merchant-name">Bean &#38; Leaf &#60;Roasters&#62;</span>');
    expect(page).toContain('<span id="amount">12.50</span>');
    expect(page).toContain("Your refund, paid in USDC on Chain 31337");
    expect(page).toContain('<span id="payment-description">Espresso machine</span>');
    expect(page).toContain("INV-2031-07");
    expect(page).toContain("ORDER-1188");
    expect(page).toContain('<span id="amount-paid">25.00 USDC</span>');
    expect(page).toContain(`<form class="claim-form" method="post" action="${path}">`);
    expect(page).toContain('<label for="refund-address">Refund address</label>');
    expect(page).toContain('<input id="refund-address" name="refund_address" type="text" required');
    expect(page).toMatch(/<input id="confirm" name="confirm" type="checkbox" value="yes" required>/);
    expect(page).toContain('<button class="btn primary" type="submit">Claim refund</button>');
    expect(page).toContain("Do not enter an exchange deposit address");
    expect(page).toContain("cannot be changed once given");
    expect(page).not.toContain("<script");
    expect(page).toContain("The merchant sends the refund from their own wallet.");
    expect(page).not.toContain("Payments go straight to the merchant");
  });

  test("shows nothing private: no reason, metadata, customer email, payout, account, payment or deposit address", async () => {
    const { path, payment, refund } = await newRefund();
    const deposit = (await merchant(`/api/v1/payments/${payment}`)).json.deposit_address as string;
    const page = await (await open(path)).text();
    for (const secret of [...SECRETS, TEST_PAYOUT, accountId, payment, deposit.toLowerCase(), refund.id])
      expect({ secret, shown: page.toLowerCase().includes(secret.toLowerCase()) }).toEqual({ secret, shown: false });
  });

  test("is a capability: not stored, not indexed, no referrer, strict CSP that lets the form post back", async () => {
    const { path } = await newRefund();
    const res = await open(path);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-robots-tag")).toBe("noindex");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain("unsafe-");
  });

  test("an unknown or malformed token is the checkout's 404 page, with nothing of any refund", async () => {
    const { path } = await newRefund();
    const token = path.split("/").pop()!;
    const other = token[0] === "A" ? `B${token.slice(1)}` : `A${token.slice(1)}`;
    for (const bad of [other, "abc", `${token}A`, token.slice(1), `${token.slice(0, 42)}.`, "%00", "..%2Fpay"]) {
      const res = await open(`/refund/${bad}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 404 });
      expect(res.headers.get("cache-control")).toBe("no-store");
      const page = await res.text();
      expect(page).toContain("<h1>Refund not found</h1>");
      expect(page).not.toContain("Roasters");
      expect(page).not.toContain("12.50");
      expect(page).not.toContain("<form");
    }
  });
});

describe("POST /refund/:token", () => {
  test("a lower-case address is fixed, EIP-55, with the exact transfer and refund.payable; the page says so", async () => {
    const { refund, path } = await newRefund();
    const res = await claim(path, { refund_address: PAYER.toLowerCase(), confirm: "yes" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(path);
    const after = await refundOf(refund.id);
    expect(after.status).toBe("awaiting_payment");
    expect(after.refund_address).toBe(getAddress(PAYER));
    expect(after.payment_instructions).toMatchObject({ to: getAddress(PAYER), amount: "12.50", chain_id: 31337 });
    const events = await payableEventsOf(refund.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.refund.refund_address).toBe(getAddress(PAYER));

    const page = await (await open(path)).text();
    expect(page).toContain("Address recorded");
    expect(page).toContain(
      `Bean &#38; Leaf &#60;Roasters&#62; will send 12.50 USDC to <span class="address" id="refund-address">${getAddress(PAYER)}</span> on Chain 31337.`,
    );
    expect(page).not.toContain("<form");
  });

  test("a bad checksum, the zero address, a deposit address, no address or no confirmation: refused, nothing changes", async () => {
    const another = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
    const deposit = another.json.deposit_address as string;
    const cases: Array<[Record<string, string>, string]> = [
      [{ refund_address: PAYER.replace("8ba1", "8BA1"), confirm: "yes" }, "fails its EIP-55 checksum"],
      [{ refund_address: "0x0000000000000000000000000000000000000000", confirm: "yes" }, "cannot be the zero address"],
      [{ refund_address: deposit, confirm: "yes" }, "is a payment&#39;s deposit address"],
      [{ refund_address: "0x1234<b>", confirm: "yes" }, "must be a 0x address of 40 hex digits"],
      [{ confirm: "yes" }, "must be a 0x address of 40 hex digits"],
      [{ refund_address: PAYER }, "Confirm that the address is your own wallet on Chain 31337"],
      [{ refund_address: PAYER, confirm: "no" }, "Confirm that the address is your own wallet"],
    ];
    for (const [fields, words] of cases) {
      const { refund, path } = await newRefund();
      const res = await claim(path, fields);
      const page = await res.text();
      expect({ fields, status: res.status }).toEqual({ fields, status: 400 });
      const message = /<p class="notice bad" role="alert" id="claim-error">([^<]*)<\/p>/.exec(page)?.[1];
      expect({ fields, message }).toEqual({ fields, message: expect.stringContaining(words) });
      // The form again, as the payer filled it in (escaped), to be corrected.
      expect(typedIn(page)).toBe((fields.refund_address ?? "").replace("<", "&#60;").replace(">", "&#62;"));
      expect(page).toContain('<button class="btn primary" type="submit">Claim refund</button>');
      expect(page).toContain('aria-describedby="claim-error address-hint"');
      const after = await refundOf(refund.id);
      expect(after).toMatchObject({ status: "awaiting_address", refund_address: null, payment_instructions: null });
      expect(await payableEventsOf(refund.id)).toEqual([]);
    }
  });

  test("a second claim is refused with the address recorded shown, which stays", async () => {
    const { refund, path } = await newRefund();
    expect((await claim(path, { refund_address: PAYER, confirm: "yes" })).status).toBe(303);
    const again = await claim(path, { refund_address: OTHER, confirm: "yes" });
    expect(again.status).toBe(409);
    const page = await again.text();
    expect(page).toContain("This refund&#39;s address was given already.");
    expect(page).toContain(getAddress(PAYER));
    expect(page).not.toContain(OTHER);
    expect(page).not.toContain("<form");
    // Whatever is typed: a refund past taking an address says so, not that the address is bad.
    const typo = await claim(path, { refund_address: "0x1234", confirm: "yes" });
    expect(typo.status).toBe(409);
    expect(await typo.text()).toContain("This refund&#39;s address was given already.");
    expect((await refundOf(refund.id)).refund_address).toBe(getAddress(PAYER));
    expect(await payableEventsOf(refund.id)).toHaveLength(1);
  });

  test("a canceled refund's page says so, and takes no address", async () => {
    const { refund, path } = await newRefund();
    expect((await merchant(`/api/v1/refunds/${refund.id}/cancel`, { method: "POST" })).status).toBe(200);
    const page = await (await open(path)).text();
    expect(page).toContain("This refund was canceled by the merchant.");
    expect(page).not.toContain("<form");
    const res = await claim(path, { refund_address: PAYER, confirm: "yes" });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("This refund was canceled.");
    expect(await refundOf(refund.id)).toMatchObject({ status: "canceled", refund_address: null });
  });

  test("a claim on an unknown token is the 404 page", async () => {
    const res = await claim(`/refund/${"A".repeat(43)}`, { refund_address: PAYER, confirm: "yes" });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("<h1>Refund not found</h1>");
  });
});

describe("after the address", () => {
  /** The refund's transfer as the watcher records it, and its success, written to its row. */
  async function setRow(id: string, columns: string) {
    await server.running.db.run(sql`UPDATE refunds SET ${raw(columns)} WHERE id = ${id}`);
  }
  const TX = `0x${"ab".repeat(32)}`;

  test("a transfer seen says it is confirming; a succeeded refund says Refunded, with the transfer", async () => {
    const { refund, path } = await newRefund();
    expect((await claim(path, { refund_address: PAYER, confirm: "yes" })).status).toBe(303);
    await setRow(refund.id, `tx_hash = '${TX}', log_index = 0, block_number = 10, block_hash = '${TX}'`);
    const confirming = await (await open(path)).text();
    expect(confirming).toContain("Transfer seen, confirming");
    expect(confirming).toContain(`<span class="mono" id="refund-tx">${TX}</span>`);
    await setRow(refund.id, "status = 'succeeded', succeeded_at = 1");
    const done = await (await open(path)).text();
    expect(done).toContain(">Refunded</p>");
    expect(done).toContain(
      `12.50 USDC was sent to <span class="address" id="refund-address">${getAddress(PAYER)}</span>`,
    );
    expect(done).toContain(TX);
  });
});

describe("limits", () => {
  test("one client's views are limited: a 429 page with Retry-After", async () => {
    const { path } = await newRefund();
    const payer = newPayer();
    for (let i = 0; i < READ_LIMIT.burst; i++) expect((await open(path, payer)).status).toBe(200);
    const res = await open(path, payer);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toContain("<h1>Please try again shortly</h1>");
    // Another payer is not held back.
    expect((await open(path)).status).toBe(200);
  });

  test("claims on one refund are limited across clients; the refused claim changes nothing", async () => {
    const { refund, path } = await newRefund();
    for (let i = 0; i < CLAIM_REFUND_LIMIT.burst; i++)
      expect((await claim(path, { refund_address: "0x1234", confirm: "yes" })).status).toBe(400);
    const res = await claim(path, { refund_address: PAYER, confirm: "yes" });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.text()).toContain("This refund&#39;s address was tried several times");
    expect(await refundOf(refund.id)).toMatchObject({ status: "awaiting_address", refund_address: null });
    // It lifts with time.
    clock.at += Number(res.headers.get("retry-after")) * 1000;
    expect((await claim(path, { refund_address: PAYER, confirm: "yes" })).status).toBe(303);
  });

  test("one client's claims are limited across refunds", async () => {
    const payer = newPayer();
    let sent = 0;
    while (sent < CLAIM_CLIENT_LIMIT.burst) {
      const { path } = await newRefund();
      for (let i = 0; i < CLAIM_REFUND_LIMIT.burst - 1 && sent < CLAIM_CLIENT_LIMIT.burst; i++, sent++)
        expect((await claim(path, { refund_address: "0x1234", confirm: "yes" }, payer)).status).toBe(400);
    }
    const { refund, path } = await newRefund();
    const res = await claim(path, { refund_address: PAYER, confirm: "yes" }, payer);
    expect(res.status).toBe(429);
    expect(await res.text()).toContain("You have sent several refund addresses just now");
    expect((await refundOf(refund.id)).status).toBe("awaiting_address");
    expect((await claim(path, { refund_address: PAYER, confirm: "yes" })).status).toBe(303);
  });
});

describe("a failure", () => {
  test("is an opaque 500, and what is logged of it holds no claim token", async () => {
    const logged: string[] = [];
    const broken = await startTestServer({}, { log: createLogger("error", (line) => logged.push(line)) });
    try {
      const owner = api(broken.url, (await broken.createAccount()).apiKey);
      const payment = (await owner("/api/v1/payments", { body: { amount: "5.00" } })).json.id as string;
      await markReceived(broken.env, payment, 5_000_000n);
      const refund = (await owner(`/api/v1/payments/${payment}/refunds`, { body: {} })).json as Refund;
      const path = new URL(refund.claim_url).pathname;
      const token = path.split("/").pop()!;
      await broken.running.db.close();
      const answers = [
        await api(broken.url, null)(path),
        await api(broken.url, null)(path, {
          body: new URLSearchParams({ refund_address: PAYER, confirm: "yes" }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded" },
        }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(500);
        expect(res.text).toBe('{"error":"internal error"}');
      }
      expect(logged.join("\n")).toMatch(/unhandled error/);
      expect(logged.join("\n")).not.toContain(token);
    } finally {
      await broken.stop();
    }
  });
});
