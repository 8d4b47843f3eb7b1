import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { payThroughLink } from "../support/link-form.ts";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

// A clock the test moves, so each payment has its own created_at a minute after the last.
const T0 = Date.parse("2031-03-01T12:00:00.000Z");
let now = T0;
const clock = { now: () => now };

let server: TestServer;
let alice: Api;
let bob: Api;
/** Alice's payments in creation order (oldest first). */
const created: Array<{ id: string; text: string }> = [];
let bobPaymentId: string;

beforeAll(async () => {
  server = await startTestServer({}, { clock });
  alice = api(server.url, (await server.createAccount("Alice")).apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
  for (let i = 0; i < 12; i++) {
    now = T0 + i * 60_000;
    const res = await alice("/api/v1/payments", { body: { amount: `${i + 1}.00`, metadata: { n: String(i) } } });
    expect(res.status).toBe(201);
    created.push({ id: res.json.id, text: res.text });
  }
  now = T0 + 30 * 60_000;
  bobPaymentId = (await bob("/api/v1/payments", { body: { amount: "99.00" } })).json.id;
});
afterAll(() => server.stop());

const newestFirst = () => created.map((p) => p.id).reverse();
const ids = (json: { data: Array<{ id: string }> }) => json.data.map((p) => p.id);
const iso = (ms: number) => new Date(ms).toISOString();

describe("GET /api/v1/payments", () => {
  test("lists newest first, 10 by default, with has_more", async () => {
    const res = await alice("/api/v1/payments");
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual(newestFirst().slice(0, 10));
    expect(res.json.has_more).toBe(true);
  });

  test("each listed item is the full payment object, byte-equal to its create response", async () => {
    const res = await alice("/api/v1/payments?limit=100");
    for (const p of created) expect(res.text).toContain(p.text);
  });

  test("limit bounds: 1 and 100 are accepted", async () => {
    const one = await alice("/api/v1/payments?limit=1");
    expect(one.status).toBe(200);
    expect(ids(one.json)).toEqual(newestFirst().slice(0, 1));
    expect(one.json.has_more).toBe(true);
    const hundred = await alice("/api/v1/payments?limit=100");
    expect(hundred.status).toBe(200);
    expect(ids(hundred.json)).toEqual(newestFirst());
    expect(hundred.json.has_more).toBe(false);
  });

  test("limit exactly the count reports no more", async () => {
    const res = await alice("/api/v1/payments?limit=12");
    expect(res.json.data).toHaveLength(12);
    expect(res.json.has_more).toBe(false);
  });

  test.each(["0", "101", "abc", "-1", "1.5", "", "1e1"])("limit=%p is 400", async (limit) => {
    const res = await alice(`/api/v1/payments?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect(res.json.error).toMatch(/limit/);
  });

  test("starting_after pages through everything exactly once", async () => {
    const seen: string[] = [];
    const hasMore: boolean[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await alice(`/api/v1/payments?limit=5${cursor ? `&starting_after=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res.json));
      hasMore.push(res.json.has_more);
      if (!res.json.has_more) break;
      cursor = res.json.data.at(-1).id;
    }
    expect(seen).toEqual(newestFirst());
    expect(hasMore).toEqual([true, true, false]);
  });

  test("starting_after the oldest payment is an empty page", async () => {
    const res = await alice(`/api/v1/payments?starting_after=${created[0]!.id}`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([]);
    expect(res.json.has_more).toBe(false);
  });

  test("status filter", async () => {
    const pending = await alice("/api/v1/payments?status=pending&limit=100");
    expect(pending.status).toBe(200);
    expect(ids(pending.json)).toEqual(newestFirst());
    for (const status of ["confirmed", "settling", "underpaid", "overpaid", "expired", "failed"]) {
      const res = await alice(`/api/v1/payments?status=${status}`);
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual([]);
      expect(res.json.has_more).toBe(false);
    }
  });

  test("an unknown status is 400", async () => {
    const res = await alice("/api/v1/payments?status=paid");
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("created[gte] is inclusive", async () => {
    const res = await alice(`/api/v1/payments?limit=100&created[gte]=${iso(T0 + 3 * 60_000)}`);
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual(newestFirst().slice(0, 9)); // payments 3..11
  });

  test("created[lt] is exclusive", async () => {
    const res = await alice(`/api/v1/payments?limit=100&created[lt]=${iso(T0 + 5 * 60_000)}`);
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual(newestFirst().slice(7)); // payments 0..4
  });

  test("created[gte] and created[lt] together, URL-encoded brackets too", async () => {
    const q = `created%5Bgte%5D=${encodeURIComponent(iso(T0 + 3 * 60_000))}&created%5Blt%5D=${encodeURIComponent(iso(T0 + 5 * 60_000))}`;
    const res = await alice(`/api/v1/payments?${q}`);
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual([created[4]!.id, created[3]!.id]);
  });

  test("filters combine with pagination", async () => {
    const first = await alice(`/api/v1/payments?limit=2&created[lt]=${iso(T0 + 5 * 60_000)}`);
    expect(ids(first.json)).toEqual([created[4]!.id, created[3]!.id]);
    expect(first.json.has_more).toBe(true);
    const second = await alice(
      `/api/v1/payments?limit=2&created[lt]=${iso(T0 + 5 * 60_000)}&starting_after=${created[3]!.id}`,
    );
    expect(ids(second.json)).toEqual([created[2]!.id, created[1]!.id]);
    expect(second.json.has_more).toBe(true);
  });

  test.each(["created[gte]=yesterday", "created[lt]=2031-99-99T00:00:00Z", "created[gte]=1700000000"])(
    "%s is 400",
    async (q) => {
      const res = await alice(`/api/v1/payments?${q}`);
      expect(res.status).toBe(400);
      expect(isErrorBody(res.json)).toBe(true);
    },
  );

  test("an unknown starting_after is 400", async () => {
    const res = await alice(`/api/v1/payments?starting_after=0x${"ab".repeat(32)}`);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("GET /api/v1/payments: security", () => {
  test("another account's payments are never listed", async () => {
    const all = await alice("/api/v1/payments?limit=100");
    expect(ids(all.json)).not.toContain(bobPaymentId);
    expect(all.text).not.toContain("99.00");
    const bobs = await bob("/api/v1/payments?limit=100");
    expect(ids(bobs.json)).toEqual([bobPaymentId]);
  });

  test("another account's payment id as starting_after is 400 and reveals nothing", async () => {
    const res = await alice(`/api/v1/payments?starting_after=${bobPaymentId}`);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    // Indistinguishable from an id nobody owns.
    const unknownId = `0x${"cd".repeat(32)}`;
    const unknown = await alice(`/api/v1/payments?starting_after=${unknownId}`);
    expect(res.text.replaceAll(bobPaymentId, "<id>")).toBe(unknown.text.replaceAll(unknownId, "<id>"));
  });

  test("without an API key it is 401", async () => {
    const res = await api(server.url, null)("/api/v1/payments");
    expect(res.status).toBe(401);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("a new account lists nothing", async () => {
    const carol = api(server.url, (await server.createAccount("Carol")).apiKey);
    const res = await carol("/api/v1/payments");
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([]);
    expect(res.json.has_more).toBe(false);
  });
});

describe("GET /api/v1/payments?payment_link=", () => {
  test("lists only the payments made through that link, newest first", async () => {
    const shop = api(server.url, (await server.createAccount("Link shop")).apiKey);
    const [first, second] = await Promise.all(
      ["Tea", "Cake"].map(async (description) => {
        const res = await shop("/api/v1/payment_links", { body: { amount: "3.00", description } });
        expect(res.status).toBe(201);
        return res.json.id as string;
      }),
    );
    const a = await payThroughLink(server.url, first!);
    const b = await payThroughLink(server.url, first!);
    await payThroughLink(server.url, second!);
    await shop("/api/v1/payments", { body: { amount: "1.00" } }); // not through any link

    const res = await shop(`/api/v1/payments?payment_link=${first}`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((p: { id: string }) => p.id)).toEqual([b, a]);
    expect(res.json.data.every((p: { payment_link: string }) => p.payment_link === first)).toBe(true);
    // Another account's link is no filter of this account's payments: nothing matches.
    expect((await alice(`/api/v1/payments?payment_link=${first}`)).json.data).toEqual([]);
  });

  test("a value that is not a payment link id is 400 naming the parameter", async () => {
    const res = await alice("/api/v1/payments?payment_link=we_123");
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("payment_link must be the id of a payment link");
    expect(isErrorBody(res.json)).toBe(true);
  });
});
