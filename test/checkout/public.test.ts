import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Api,
  api,
  isErrorBody,
  startTestServer,
  TEST_PAYOUT,
  TEST_USDC,
  type TestAccount,
  type TestServer,
} from "../support/server.ts";

const FEE_RECIPIENT = "0x3333333333333333333333333333333333333333";
const METADATA_VALUE = "internal-crm-7f3a9c";
const CUSTOMER_EMAIL = "payer-private@example.com";

let server: TestServer;
let merchant: TestAccount;
let merchantApi: Api;
const anon = () => api(server.url, null);
/** The merchant's view of a fully populated payment. */
let payment: Record<string, any>;

beforeAll(async () => {
  server = await startTestServer({ feeBps: 150, feeRecipient: FEE_RECIPIENT });
  merchant = await server.createAccount("Public Shop");
  merchantApi = api(server.url, merchant.apiKey);
  const res = await merchantApi("/api/v1/payments", {
    body: {
      line_items: [
        { description: "Widget", unit_amount: "12.50", quantity: 2 },
        { description: "Sticker", unit_amount: "0.99", quantity: 1 },
      ],
      description: "Order 77",
      reference: "ord_77",
      success_url: "https://shop.example.com/thanks",
      customer_email: CUSTOMER_EMAIL,
      customer_name: "Grace Hopper",
      invoice_number: "INV-77",
      due_at: new Date(Date.now() + 5 * 24 * 3_600_000).toISOString(),
      metadata: { crm: METADATA_VALUE },
    },
  });
  expect(res.status).toBe(201);
  payment = res.json;
});
afterAll(() => server.stop());

const unknownId = `0x${"9f".repeat(32)}`;
const path = (id: string, rest = "") => `/api/public/payments/${id}${rest}`;

describe("GET /api/public/payments/{id}", () => {
  test("200 with the fields of DESIGN §4", async () => {
    const res = await anon()(path(payment.id));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const v = res.json;
    expect(v).toMatchObject({
      id: payment.id,
      status: "pending",
      amount: "25.99",
      amount_received: null,
      amount_due: "25.99",
      currency: "USDC",
      deposit_address: payment.deposit_address,
      chain: "custom",
      chain_id: 31337,
      token_address: TEST_USDC,
      expires_at: payment.expires_at,
      created_at: payment.created_at,
      description: "Order 77",
      reference: "ord_77",
      invoice_number: "INV-77",
      due_at: payment.due_at,
      customer_name: "Grace Hopper",
      merchant_name: "Public Shop",
    });
    expect(v.line_items).toEqual(payment.line_items);
    expect(v).toHaveProperty("success_url");
    expect(v.payment_uri).toBe(
      `ethereum:${TEST_USDC}@31337/transfer?address=${payment.deposit_address}&uint256=25990000`,
    );
  });

  test("networks: the settlement chain alone when no source chain is enabled", async () => {
    const v = (await anon()(path(payment.id))).json;
    expect(v.networks).toEqual([
      { chain: "custom", chain_id: 31337, token_address: TEST_USDC, payment_uri: v.payment_uri, explorer: null },
    ]);
  });

  test("success_url is null while the payment is not confirmed", async () => {
    const v = (await anon()(path(payment.id))).json;
    expect(v.success_url).toBeNull();
    expect((await anon()(path(payment.id))).text).not.toContain("shop.example.com/thanks");
  });

  test("never exposes metadata, fee, customer email, account or payout/fee addresses", async () => {
    const res = await anon()(path(payment.id));
    for (const field of [
      "metadata",
      "fee_bps",
      "customer_email",
      "account_id",
      "account",
      "payout_address",
      "fee_recipient",
      "api_key",
    ]) {
      expect(res.json).not.toHaveProperty(field);
    }
    const text = res.text.toLowerCase();
    expect(text).not.toContain(METADATA_VALUE);
    expect(text).not.toContain(CUSTOMER_EMAIL);
    expect(text).not.toContain(merchant.accountId.toLowerCase());
    expect(text).not.toContain(TEST_PAYOUT.slice(2).toLowerCase());
    expect(text).not.toContain(FEE_RECIPIENT.slice(2).toLowerCase());
    expect(text).not.toContain("fee_bps");
    expect(text).not.toContain("sk_live_");
    // The merchant view, by contrast, does carry the fee (so the check above is meaningful).
    expect(payment.fee_bps).toBe(150);
  });

  test("a payment without optional fields still renders, with nulls", async () => {
    const plain = (await merchantApi("/api/v1/payments", { body: { amount: "1.00" } })).json;
    const v = (await anon()(path(plain.id))).json;
    expect(v.amount).toBe("1.00");
    expect(v.description).toBeNull();
    expect(v.line_items).toBeNull();
    expect(v.due_at).toBeNull();
  });

  test("an unknown id is 404", async () => {
    const res = await anon()(path(unknownId));
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test.each(["abc", "0x123", `0x${"G".repeat(64)}`, `0x${"a".repeat(65)}`, `0x${"A".repeat(64)}`, "%20"])(
    "a malformed id %p is 404",
    async (id) => {
      const res = await anon()(path(id));
      expect(res.status).toBe(404);
      expect(isErrorBody(res.json)).toBe(true);
    },
  );

  test("the real id in upper case is 404 (ids are canonical lower-case hex)", async () => {
    const res = await anon()(path(`0x${payment.id.slice(2).toUpperCase()}`));
    expect(res.status).toBe(404);
  });

  test("unknown and malformed ids answer the same body", async () => {
    const a = await anon()(path(unknownId));
    const b = await anon()(path("nonsense"));
    expect(a.text).toBe(b.text);
  });

  test("the payment id does not open the merchant API", async () => {
    const res = await api(server.url, payment.id)(`/api/v1/payments/${payment.id}`);
    expect(res.status).toBe(401);
  });
});

describe("public CORS", () => {
  test("public responses carry Access-Control-Allow-Origin: * and no credentials", async () => {
    const res = await anon()(path(payment.id), { headers: { origin: "https://merchant.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("public error responses carry it too, so the widget can read them", async () => {
    const res = await anon()(path(unknownId), { headers: { origin: "https://merchant.example" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("the QR and sync responses carry it", async () => {
    const qr = await anon()(path(payment.id, "/qr"), { headers: { origin: "https://merchant.example" } });
    expect(qr.headers.get("access-control-allow-origin")).toBe("*");
    const sync = await anon()(path(payment.id, "/sync"), {
      body: { tx_hash: "nope" },
      headers: { origin: "https://merchant.example" },
    });
    expect(sync.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("OPTIONS preflight is 204 with the allowed methods", async () => {
    for (const rest of ["", "/sync", "/cross-chain", "/qr"]) {
      const res = await fetch(server.url + path(payment.id, rest), {
        method: "OPTIONS",
        headers: {
          origin: "https://merchant.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const methods = (res.headers.get("access-control-allow-methods") ?? "").split(",").map((m) => m.trim());
      expect(methods).toContain("GET");
      expect(methods).toContain("POST");
      expect((res.headers.get("access-control-allow-headers") ?? "").toLowerCase()).toContain("content-type");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  test("merchant routes carry no CORS headers", async () => {
    const headers = { origin: "https://evil.example" };
    const list = await merchantApi("/api/v1/payments", { headers });
    expect(list.status).toBe(200);
    const one = await merchantApi(`/api/v1/payments/${payment.id}`, { headers });
    const denied = await api(server.url, null)("/api/v1/payments", { headers });
    const preflight = await fetch(`${server.url}/api/v1/payments`, {
      method: "OPTIONS",
      headers: {
        ...headers,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization",
      },
    });
    for (const res of [list, one, denied, preflight]) {
      const names: string[] = [];
      res.headers.forEach((_value, name) => {
        names.push(name.toLowerCase());
      });
      expect(names.filter((name) => name.startsWith("access-control-"))).toEqual([]);
    }
  });
});

describe("GET /api/public/payments/{id}/qr", () => {
  test("an SVG of the deposit address", async () => {
    const res = await anon()(path(payment.id, "/qr"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("image/svg+xml");
    const svg = res.text;
    expect(svg.trimStart()).toStartWith("<svg");
    expect(svg.trimEnd()).toEndWith("</svg>");
  });

  test("?format=eip681 is a different SVG; ?format=address is the default", async () => {
    const plain = (await anon()(path(payment.id, "/qr"))).text;
    const explicit = (await anon()(path(payment.id, "/qr?format=address"))).text;
    const res = await anon()(path(payment.id, "/qr?format=eip681"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("image/svg+xml");
    const eip681 = res.text;
    expect(eip681.trimStart()).toStartWith("<svg");
    expect(eip681).not.toBe(plain);
    expect(explicit).toBe(plain);
  });

  test("?format=bogus is 400", async () => {
    const res = await anon()(path(payment.id, "/qr?format=bogus"));
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("unknown and malformed ids are 404", async () => {
    expect((await anon()(path(unknownId, "/qr"))).status).toBe(404);
    expect((await anon()(path("zzz", "/qr"))).status).toBe(404);
  });
});

describe("POST /api/public/payments/{id}/sync", () => {
  test.each([
    ["a malformed tx_hash", { tx_hash: "0x1234" }],
    ["a tx_hash without 0x", { tx_hash: "ab".repeat(32) }],
    ["a tx_hash that is not a string", { tx_hash: 1 }],
    ["no tx_hash", {}],
    ["an unknown field", { tx_hash: `0x${"ab".repeat(32)}`, extra: true }],
  ])("%s is 400", async (_name, body) => {
    const res = await anon()(path(payment.id, "/sync"), { body });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("a missing body is 400", async () => {
    const res = await anon()(path(payment.id, "/sync"), { method: "POST" });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("malformed JSON is 400", async () => {
    const res = await anon()(path(payment.id, "/sync"), { body: "{tx_hash" });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("an unknown payment with a well-formed hash is 404", async () => {
    const res = await anon()(path(unknownId, "/sync"), { body: { tx_hash: `0x${"ab".repeat(32)}` } });
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("/api/public/payments/{id}/cross-chain", () => {
  test("GET without a chain lists the source chains: none configured", async () => {
    const res = await anon()(path(payment.id, "/cross-chain"));
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([]);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("GET ?chain=nope is 400", async () => {
    const res = await anon()(path(payment.id, "/cross-chain?chain=nope"));
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("GET for an unknown payment is 404", async () => {
    expect((await anon()(path(unknownId, "/cross-chain"))).status).toBe(404);
  });

  test.each([
    ["an empty object", {}],
    ["a malformed tx_hash", { chain: "ethereum", tx_hash: "0x12" }],
    ["a missing chain", { tx_hash: `0x${"ab".repeat(32)}` }],
    ["a chain that is not a string", { chain: 1, tx_hash: `0x${"ab".repeat(32)}` }],
    ["malformed JSON", "{chain"],
  ])("POST with %s is 400", async (_name, body) => {
    const res = await anon()(path(payment.id, "/cross-chain"), { method: "POST", body });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("POST with no body is 400", async () => {
    const res = await anon()(path(payment.id, "/cross-chain"), { method: "POST" });
    expect(res.status).toBe(400);
  });
});
