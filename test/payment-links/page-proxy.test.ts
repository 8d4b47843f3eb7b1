/**
 * A payment link's page behind a reverse proxy, as deploy/compose.yaml runs it: the real server
 * over real HTTP with a real proxy process in front (test/support/forwarding-proxy.ts), payers
 * connecting from loopback addresses of their own. One client starting payment after payment is
 * slowed alone, and the next real payer behind the same proxy pays; without the proxy in
 * STABLEGATE_TRUSTED_PROXIES its X-Forwarded-For is not believed, and everyone behind it is one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LINK_PAY_LIMIT } from "../../src/rate-limits/index.ts";
import {
  fetchFrom,
  PROXY_ADDRESS,
  type ProxiedServer,
  startBehindProxy,
  stopBehindProxy,
} from "../support/forwarding-proxy.ts";
import { api } from "../support/server.ts";

type Rig = ProxiedServer<{ linkId: string }>;

/** The server behind the proxy, and a payment link. */
const startRig = (env: Record<string, string>): Promise<Rig> =>
  startBehindProxy(env, async (server) => {
    const merchant = api(server.url, (await server.createAccount("Proxy Shop")).apiKey);
    const link = await merchant("/api/v1/payment_links", { body: { amount: "4.00" } });
    return { linkId: link.json.id as string };
  });
const stopRig = stopBehindProxy;

/** Opens the link's page and presses Pay, as `payer`, through the proxy; the POST's status. */
async function pay(rig: Rig, payer: string, headers: Record<string, string> = {}): Promise<number> {
  const page = await (await fetchFrom(payer, `${rig.proxy.url}/l/${rig.linkId}`, { headers })).text();
  const nonce = /name="nonce" value="([^"]+)"/.exec(page)![1]!;
  const res = await fetchFrom(payer, `${rig.proxy.url}/l/${rig.linkId}`, {
    method: "POST",
    headers,
    body: new URLSearchParams({ nonce }),
  });
  return res.status;
}

const statuses = async (rig: Rig, payer: string, times: number, forge = false) => {
  const out: number[] = [];
  for (let i = 0; i < times; i++)
    out.push(await pay(rig, payer, forge ? { "x-forwarded-for": `198.51.100.${i + 1}` } : {}));
  return out;
};

describe("behind a proxy listed in STABLEGATE_TRUSTED_PROXIES", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ STABLEGATE_TRUSTED_PROXIES: PROXY_ADDRESS });
  });
  afterAll(() => stopRig(rig));

  test("one client starting payment after payment is slowed alone; the next real payer pays", async () => {
    const burst = LINK_PAY_LIMIT.burst;
    expect(await statuses(rig, "127.0.0.10", burst + 25)).toEqual([...Array(burst).fill(303), ...Array(25).fill(429)]);
    expect(await pay(rig, "127.0.0.11")).toBe(303);
  });

  test("a client's own X-Forwarded-For gets it nothing: the hop the proxy added is the client", async () => {
    const burst = LINK_PAY_LIMIT.burst;
    expect(await statuses(rig, "127.0.0.12", burst + 1, true)).toEqual([...Array(burst).fill(303), 429]);
  });
});

describe("behind the same proxy without STABLEGATE_TRUSTED_PROXIES", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({});
  });
  afterAll(() => stopRig(rig));

  test("the proxy's X-Forwarded-For is not believed: every payer behind it is one client", async () => {
    const burst = LINK_PAY_LIMIT.burst;
    expect(await statuses(rig, "127.0.0.10", burst)).toEqual(Array(burst).fill(303));
    expect(await pay(rig, "127.0.0.11")).toBe(429);
  });
});
