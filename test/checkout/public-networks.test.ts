/**
 * The networks a payer may use, as the public view, the QR endpoint and the page show them: a
 * server with two source chains offered (a built-in one and a custom one, both served by one real
 * anvil holding the deposit factory) and one whose RPC is dead (its factory cannot be seen, so it
 * is not offered), a version 2 payment created through the API, and a version 1 payment (made
 * before cross-chain was on) in the same database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { crossChainConfig } from "../../src/config.ts";
import { qrSvg } from "../../src/html/qr.ts";
import { CHAINS } from "../../src/lib/chains.ts";
import { createPaymentStore, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { type Api, api, isErrorBody, startTestServer, TEST_USDC, type TestServer } from "../support/server.ts";
import { startChain, type TestChain } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

const LOCAL_USDC = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const ARBITRUM_SEPOLIA = CHAINS.get("arbitrum-sepolia")!;

let chain: TestChain;
let server: TestServer;
let merchant: Api;
const anon = () => api(server.url, null);
/** Created through the API with cross-chain on: version 2. */
let v2: Record<string, any>;
/** Written as a payment made before cross-chain was enabled: version 1. */
let v1: { id: string; deposit_address: string };

beforeAll(async () => {
  // Whatever chain id they claim, both offered sources are this anvil, where the factory is.
  chain = await startChain();
  const crossChain = crossChainConfig(
    {
      STABLEGATE_CCTP_SOURCES: `arbitrum-sepolia=${chain.rpcUrl}`,
      STABLEGATE_CCTP_CUSTOM_SOURCES: JSON.stringify([
        { name: "local-source", chain_id: 31338, domain: 9, usdc: LOCAL_USDC, rpc_url: chain.rpcUrl },
        { name: "dead-source", chain_id: 31339, domain: 11, usdc: LOCAL_USDC, rpc_url: "http://127.0.0.1:1" },
      ]),
      STABLEGATE_CCTP_DOMAIN: "10",
    },
    { name: "custom", chainId: 31337 },
    (variable, problem) => {
      throw new Error(`${variable}: ${problem}`);
    },
  );
  server = await startTestServer({ crossChain });
  const account = await server.createAccount("Networks Shop");
  merchant = api(server.url, account.apiKey);
  const created = await merchant("/api/v1/payments", { body: { amount: "12.34" } });
  expect(created.status).toBe(201);
  v2 = created.json;
  v1 = await insertPayment(createPaymentStore(server.running.db), paymentRow(account.accountId, Date.now()));
  // Offered once the server has looked for the factory on each.
  await waitFor(
    async () => (await anon()(path(v2.id))).json.networks.length === 3,
    10_000,
    "the source chains to be offered",
  );
});
afterAll(async () => {
  await server?.stop();
  await chain?.stop();
});

const path = (id: string, rest = "") => `/api/public/payments/${id}${rest}`;
const uri = (usdc: string, chainId: number, deposit: string, units: string) =>
  `ethereum:${usdc}@${chainId}/transfer?address=${deposit}&uint256=${units}`;
const qr = async (id: string, query: string) => {
  const res = await anon()(path(id, `/qr${query}`));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("image/svg+xml");
  return res.text;
};

describe("the public view's networks", () => {
  test("a version 2 payment: the settlement chain first, then every source chain offered, one address", async () => {
    const res = await anon()(path(v2.id));
    expect(res.status).toBe(200);
    const deposit = v2.deposit_address;
    expect(res.json.networks).toEqual([
      {
        chain: "custom",
        chain_id: 31337,
        token_address: TEST_USDC,
        payment_uri: uri(TEST_USDC, 31337, deposit, "12340000"),
        explorer: null,
      },
      {
        chain: "arbitrum-sepolia",
        chain_id: ARBITRUM_SEPOLIA.chainId,
        token_address: ARBITRUM_SEPOLIA.usdc,
        payment_uri: uri(ARBITRUM_SEPOLIA.usdc, ARBITRUM_SEPOLIA.chainId, deposit, "12340000"),
        explorer: "https://sepolia.arbiscan.io",
      },
      {
        chain: "local-source",
        chain_id: 31338,
        token_address: LOCAL_USDC,
        payment_uri: uri(LOCAL_USDC, 31338, deposit, "12340000"),
        explorer: null,
      },
    ]);
    // The settlement chain's fields stay where they were.
    expect(res.json).toMatchObject({ chain: "custom", chain_id: 31337, token_address: TEST_USDC });
    expect(res.json.payment_uri).toBe(res.json.networks[0].payment_uri);
  });

  test("a version 1 payment: the settlement chain alone, even with source chains enabled", async () => {
    const res = await anon()(path(v1.id));
    expect(res.status).toBe(200);
    expect(res.json.networks).toEqual([
      {
        chain: "custom",
        chain_id: 31337,
        token_address: TEST_USDC,
        payment_uri: uri(TEST_USDC, 31337, v1.deposit_address, "25000000"),
        explorer: null,
      },
    ]);
  });

  test("nothing private rides along: no payout, fee or salt fields", async () => {
    const res = await anon()(path(v2.id));
    for (const field of ["payout_address", "fee_bps", "fee_recipient", "token_messenger", "max_bridge_fee_bps"]) {
      expect(res.json).not.toHaveProperty(field);
      for (const network of res.json.networks) expect(network).not.toHaveProperty(field);
    }
  });
});

describe("GET .../qr?chain=", () => {
  test("format=eip681 with a chain encodes that chain's request; without one, the settlement chain's", async () => {
    const deposit = v2.deposit_address;
    expect(await qr(v2.id, "?format=eip681&chain=local-source")).toBe(
      await qrSvg(uri(LOCAL_USDC, 31338, deposit, "12340000")),
    );
    expect(await qr(v2.id, "?format=eip681&chain=arbitrum-sepolia")).toBe(
      await qrSvg(uri(ARBITRUM_SEPOLIA.usdc, ARBITRUM_SEPOLIA.chainId, deposit, "12340000")),
    );
    const settlement = await qrSvg(uri(TEST_USDC, 31337, deposit, "12340000"));
    expect(await qr(v2.id, "?format=eip681")).toBe(settlement);
    expect(await qr(v2.id, "?format=eip681&chain=custom")).toBe(settlement);
  });

  test("the address format is the same address on any of the payment's chains", async () => {
    expect(await qr(v2.id, "?chain=local-source")).toBe(await qrSvg(v2.deposit_address));
  });

  test("an unknown chain, or an enabled one not offered, is a 400 naming the payment's chains", async () => {
    for (const chain of ["ethereum", "dead-source"]) {
      const res = await anon()(path(v2.id, `/qr?format=eip681&chain=${chain}`));
      expect(res.status).toBe(400);
      expect(isErrorBody(res.json)).toBe(true);
      expect(res.json.error).toBe("chain must be one of custom, arbitrum-sepolia, local-source");
    }
  });

  test("a source chain is unknown to a version 1 payment: its address holds nothing there", async () => {
    for (const format of ["eip681", "address"]) {
      const res = await anon()(path(v1.id, `/qr?format=${format}&chain=local-source`));
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: "chain must be one of custom" });
    }
  });

  test("an empty or overlong chain is a 400 naming the parameter", async () => {
    for (const chain of ["", "x".repeat(65)]) {
      const res = await anon()(path(v2.id, `/qr?format=eip681&chain=${chain}`));
      expect(res.status).toBe(400);
      expect(isErrorBody(res.json)).toBe(true);
      expect(res.json.error).toStartWith("chain ");
    }
  });
});

describe("the checkout page", () => {
  const qrImages = (html: string) =>
    [...html.matchAll(/<img[^>]+src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)"/g)].map((m) =>
      Buffer.from(m[1]!, "base64").toString("utf8"),
    );

  test("a version 2 payment: the address once, then each network with its own EIP-681 QR", async () => {
    const html = (await anon()(`/pay/${v2.id}`)).text;
    const shown = html.replace(/<script type="application\/json"[\s\S]*?<\/script>/, "");
    expect(shown.split(v2.deposit_address).length - 1).toBe(1);
    expect(html).toContain("Send USDC on any of these networks");
    expect([...html.matchAll(/<li class="network" data-chain="([a-z0-9-]+)"/g)].map((m) => m[1])).toEqual([
      "custom",
      "arbitrum-sepolia",
      "local-source",
    ]);
    expect(html).toContain("Arbitrum Sepolia");
    expect(html).toContain("Local Source");
    expect(html).toContain("Send only USDC, and only on a network listed here.");
    const deposit = v2.deposit_address;
    expect(qrImages(html)).toEqual([
      await qrSvg(uri(TEST_USDC, 31337, deposit, "12340000")),
      await qrSvg(uri(ARBITRUM_SEPOLIA.usdc, ARBITRUM_SEPOLIA.chainId, deposit, "12340000")),
      await qrSvg(uri(LOCAL_USDC, 31338, deposit, "12340000")),
    ]);
  });

  test("a version 1 payment: one network, the deposit address QR, and no network picker", async () => {
    const html = (await anon()(`/pay/${v1.id}`)).text;
    expect(qrImages(html)).toEqual([await qrSvg(v1.deposit_address)]);
    expect(html).not.toContain('class="network"');
    expect(html).not.toContain('id="wallet-network"');
    expect(html).toContain("Send only USDC on Chain 31337.");
  });
});
