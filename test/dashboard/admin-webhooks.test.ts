/**
 * The dashboard's webhooks pages over real HTTP with a signed-in client: adding an endpoint
 * (the secret shown once, the API's URL rules), its delivery log, test events under the API's
 * allowance, retry, delete, and another account's ids answered 404 with nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

/** Test events an endpoint may ask for at once here; every test uses an endpoint of its own. */
const TEST_BURST = 25;
const LIMITS = {
  test: {
    burst: TEST_BURST,
    perSecond: 1 / 3600,
    message: "too many test events for this webhook endpoint; try again shortly",
  },
  retry: { burst: 100, perSecond: 10 },
};

/** Refuses private addresses like production; its endpoints are never sent to (nothing is due). */
let strict: TestServer;
/** Sends to the local receiver (STABLEGATE_WEBHOOK_ALLOW_PRIVATE); payments expire after 1 s. */
let open: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = startReceiver();
  strict = await startTestServer();
  open = await startTestServer({ webhookAllowPrivate: true, paymentWindowMs: 1_000 }, { webhookLimits: LIMITS });
});
afterAll(async () => {
  receiver?.stop();
  await Promise.all([strict?.stop(), open?.stop()]);
});

interface Merchant {
  accountId: string;
  call: Api;
  client: DashboardClient;
}

async function merchant(server: TestServer, name: string): Promise<Merchant> {
  const account = await server.createAccount(name);
  const user = await createDashboardUser(server.env, account.accountId);
  return {
    accountId: account.accountId,
    call: api(server.url, account.apiKey),
    client: await signIn(server.url, user),
  };
}

/** The add form's one-time token, as a browser gets it from the page. */
async function formToken(client: DashboardClient): Promise<string> {
  const page = await (await client.get("/dashboard/webhooks")).text();
  return /name="token" value="([0-9A-Za-z]{32})"/.exec(page)![1]!;
}

async function addEndpoint(m: Merchant, url: string): Promise<{ id: string; page: string }> {
  const res = await m.client.post("/dashboard/webhooks", { url, token: await formToken(m.client) });
  const page = await res.text();
  expect(res.status).toBe(200);
  const id = /href="\/dashboard\/webhooks\/(we_[0-9A-Za-z]{24})"/.exec(page)![1]!;
  return { id, page };
}

const endpoints = async (m: Merchant) => (await m.call("/api/v1/webhook_endpoints")).json.data as Array<{ id: string }>;
const deliveriesOf = async (m: Merchant, id: string) =>
  (await m.call(`/api/v1/webhook_endpoints/${id}/deliveries?limit=100`)).json.data as Array<{
    id: string;
    status: string;
    attempt_count: number;
    event_type: string;
  }>;

describe("adding an endpoint", () => {
  test("shows its signing secret once, with a copy button; the list and the API then show the endpoint", async () => {
    const m = await merchant(open, "Hooked Shop");
    const { id, page } = await addEndpoint(m, receiver.url);
    const secret = /<code class="mono secret" id="endpoint-secret">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(page)?.[1];
    expect(secret).toBeDefined();
    expect(page).toContain(`data-copy="${secret}"`);
    expect(page).toContain("shown only this once");
    expect((await endpoints(m)).map((e) => e.id)).toEqual([id]);
    const list = await (await m.client.get("/dashboard/webhooks")).text();
    expect(list).toContain(receiver.url);
    expect(list).toContain('<span class="badge enabled">Enabled</span>');
    expect(list).not.toContain(secret!);
    expect(await (await m.client.get(`/dashboard/webhooks/${id}`)).text()).not.toContain(secret!);
  });

  test("the same form submitted twice adds one endpoint and shows the same secret", async () => {
    const m = await merchant(open, "Double Click Shop");
    const token = await formToken(m.client);
    const first = await (await m.client.post("/dashboard/webhooks", { url: receiver.url, token })).text();
    const second = await (await m.client.post("/dashboard/webhooks", { url: receiver.url, token })).text();
    const secretOf = (page: string) => /id="endpoint-secret">(whsec_[^<]+)</.exec(page)?.[1];
    expect(secretOf(first)).toBeDefined();
    expect(secretOf(second)).toBe(secretOf(first)!);
    expect(await endpoints(m)).toHaveLength(1);
  });

  test("while the same form is still being submitted, a second submit says so in its own words and adds nothing", async () => {
    const m = await merchant(open, "Double Clicking Shop");
    const token = await formToken(m.client);
    // The first submit is still running (its URL still resolving): its claim is in the database.
    await open.running.db.run(
      sql`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES (${m.accountId}, ${`dashboard-webhook:${token}`}, ${"in-flight"}, ${Date.now()})`,
    );
    const res = await m.client.post("/dashboard/webhooks", { url: receiver.url, token });
    expect(res.status).toBe(409);
    const page = await res.text();
    expect(page).toContain("This form is still being submitted.");
    expect(page).not.toContain("Idempotency-Key");
    expect(await endpoints(m)).toEqual([]);
  });

  test("a URL the API would refuse is refused with the API's reason, and nothing is added", async () => {
    const m = await merchant(strict, "Careful Shop");
    const cases: Array<[string, string]> = [
      ["https://private.example.com/hook", "private"],
      ["https://metadata.example.com/hook", "169.254.169.254"],
      ["http://hooks.example.com/hook", "https"],
      ["", "url: enter the https URL"],
      [
        `https://hooks.example.com/${"a".repeat(2049 - "https://hooks.example.com/".length)}`,
        "url must be an https URL of at most 2048 characters",
      ],
    ];
    for (const [url, says] of cases) {
      const res = await m.client.post("/dashboard/webhooks", { url, token: await formToken(m.client) });
      const page = await res.text();
      expect({ url, status: res.status, says: page.includes(says) }).toEqual({ url, status: 400, says: true });
      expect(page).toContain('class="notice bad"');
    }
    expect(await endpoints(m)).toEqual([]);
  });
});

describe("an endpoint's page", () => {
  test("lists each delivery with its event type, payment, status and every attempt, newest first", async () => {
    const m = await merchant(open, "Logged Shop");
    const { id } = await addEndpoint(m, receiver.url);
    const payment = (await m.call("/api/v1/payments", { body: { amount: "2.00" } })).json;
    expect((await m.client.post(`/dashboard/webhooks/${id}/test`, {})).status).toBe(303);
    const listed = await waitFor(
      async () => {
        const d = await deliveriesOf(m, id);
        return d.length === 2 && d.every((x) => x.status === "succeeded") ? d : undefined;
      },
      10_000,
      "the expiry event and the test event to be delivered",
    );
    const page = await (await m.client.get(`/dashboard/webhooks/${id}`)).text();
    const shown = [...page.matchAll(/<li class="delivery" id="(whd_[0-9A-Za-z]{24})">/g)].map((x) => x[1]);
    expect(shown).toEqual(listed.map((d) => d.id));
    expect(page).toContain('<span class="event-type mono">payment.expired</span>');
    expect(page).toContain('<span class="event-type mono">test</span>');
    expect(page).toContain(`href="/dashboard/payments/${payment.id}"`);
    expect(page.match(/<span class="badge succeeded">Succeeded<\/span>/g)).toHaveLength(2);
    // Each attempt: its time, its result, the response code and how long it took.
    expect(page.match(/<td class="num">200<\/td>\s*<td class="num">\d+ ms<\/td>/g)).toHaveLength(2);
  });

  test("pages through a long log with an Older link, twenty at a time", async () => {
    const m = await merchant(open, "Busy Shop");
    const { id } = await addEndpoint(m, receiver.url);
    for (let i = 0; i < 21; i++)
      expect((await m.call(`/api/v1/webhook_endpoints/${id}/test`, { method: "POST" })).status).toBe(202);
    const all = (await deliveriesOf(m, id)).map((d) => d.id);
    expect(all).toHaveLength(21);
    const first = await (await m.client.get(`/dashboard/webhooks/${id}`)).text();
    const idsOn = (page: string) =>
      [...page.matchAll(/<li class="delivery" id="(whd_[0-9A-Za-z]{24})">/g)].map((x) => x[1]);
    expect(idsOn(first)).toEqual(all.slice(0, 20));
    const older = /<a href="([^"]+)">Older deliveries<\/a>/.exec(first)![1]!.replaceAll("&#38;", "&");
    const second = await (await m.client.get(older)).text();
    expect(idsOn(second)).toEqual(all.slice(20));
    expect(second).not.toContain("Older deliveries");
    expect(second).toContain(`<a href="/dashboard/webhooks/${id}">Newest</a>`);
  });

  test("a bad page link shows the first page and says what was wrong, with a 400", async () => {
    const m = await merchant(open, "Linked Shop");
    const { id } = await addEndpoint(m, receiver.url);
    const res = await m.client.get(`/dashboard/webhooks/${id}?starting_after=whd_nope`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("starting_after: no delivery whd_nope");
  });
});

describe("sending from the dashboard", () => {
  test("Send test event queues a signed test event that reaches the receiver", async () => {
    const m = await merchant(open, "Pinging Shop");
    const { id } = await addEndpoint(m, receiver.url);
    const res = await m.client.post(`/dashboard/webhooks/${id}/test`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/webhooks/${id}?sent=test`);
    const [delivery] = await deliveriesOf(m, id);
    expect(delivery!.event_type).toBe("test");
    await waitFor(
      () => receiver.hits.some((h) => h.body.includes('"type":"test"') && h.id.length > 0),
      10_000,
      "the test event",
    );
    expect(await (await m.client.get(res.headers.get("location")!)).text()).toContain("Test event queued");
  });

  test("over the endpoint's allowance, shared with the API, the answer is a 429 page with Retry-After and nothing is queued", async () => {
    const m = await merchant(open, "Impatient Shop");
    const { id } = await addEndpoint(m, receiver.url);
    for (let i = 0; i < TEST_BURST; i++)
      expect((await m.call(`/api/v1/webhook_endpoints/${id}/test`, { method: "POST" })).status).toBe(202);
    const res = await m.client.post(`/dashboard/webhooks/${id}/test`, {});
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const page = await res.text();
    expect(page).toContain("too many test events for this webhook endpoint; try again shortly (in about");
    expect(page).toContain("<!doctype html>");
    expect(await deliveriesOf(m, id)).toHaveLength(TEST_BURST);
  });

  test("Retry sends a delivery again through the retry service: one more attempt", async () => {
    const m = await merchant(open, "Retrying Shop");
    const { id } = await addEndpoint(m, receiver.url);
    await m.client.post(`/dashboard/webhooks/${id}/test`, {});
    const delivered = await waitFor(
      async () => (await deliveriesOf(m, id)).find((d) => d.status === "succeeded" && d.attempt_count === 1),
      10_000,
      "the first attempt",
    );
    const res = await m.client.post(`/dashboard/webhooks/${id}/deliveries/${delivered.id}/retry`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/webhooks/${id}?retried=${delivered.id}`);
    await waitFor(
      async () =>
        (await deliveriesOf(m, id)).find(
          (d) => d.id === delivered.id && d.attempt_count === 2 && d.status === "succeeded",
        ),
      10_000,
      "the second attempt",
    );
    const page = await (await m.client.get(res.headers.get("location")!)).text();
    expect(page).toContain(`Delivery ${delivered.id} queued to be sent again now.`);
    expect(page).toContain("2 attempts");
    // A crafted link puts no words of its own on the page.
    const crafted = await (await m.client.get(`/dashboard/webhooks/${id}?retried=Your+account+is+suspended`)).text();
    expect(crafted).not.toContain("suspended");
  });
});

describe("deleting an endpoint", () => {
  test("needs the confirmation box: without it a 400 and the endpoint stays; with it a 303 and it is gone", async () => {
    const m = await merchant(open, "Tidy Shop");
    const { id } = await addEndpoint(m, receiver.url);
    const unconfirmed = await m.client.post(`/dashboard/webhooks/${id}/delete`, {});
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.text()).toContain("confirm: tick the box");
    expect((await endpoints(m)).map((e) => e.id)).toEqual([id]);
    const res = await m.client.post(`/dashboard/webhooks/${id}/delete`, { confirm: "yes" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/webhooks?deleted=1");
    expect(await endpoints(m)).toEqual([]);
    expect((await m.client.get(`/dashboard/webhooks/${id}`)).status).toBe(404);
  });
});

describe("another account's endpoint", () => {
  test("is 404 for the page and every action, and nothing changes", async () => {
    const owner = await merchant(open, "Owner Shop");
    const other = await merchant(open, "Prying Shop");
    const { id } = await addEndpoint(owner, receiver.url);
    await owner.client.post(`/dashboard/webhooks/${id}/test`, {});
    const [delivery] = await waitFor(async () => {
      const d = await deliveriesOf(owner, id);
      return d.length === 1 && d[0]!.attempt_count === 1 ? d : undefined;
    });
    const answers = [
      await other.client.get(`/dashboard/webhooks/${id}`),
      await other.client.post(`/dashboard/webhooks/${id}/test`, {}),
      await other.client.post(`/dashboard/webhooks/${id}/deliveries/${delivery!.id}/retry`, {}),
      await other.client.post(`/dashboard/webhooks/${id}/delete`, { confirm: "yes" }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(404);
      const page = await res.text();
      expect(page).toContain("<h1>Not found</h1>");
      expect(page).not.toContain(receiver.url);
    }
    expect((await endpoints(owner)).map((e) => e.id)).toEqual([id]);
    const after = await deliveriesOf(owner, id);
    expect(after.map((d) => [d.id, d.attempt_count])).toEqual([[delivery!.id, 1]]);
    // The owner's own delivery under another of their endpoints' ids is unknown too.
    const { id: second } = await addEndpoint(owner, receiver.url);
    expect((await owner.client.post(`/dashboard/webhooks/${second}/deliveries/${delivery!.id}/retry`, {})).status).toBe(
      404,
    );
  });
});
