import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, api, isErrorBody, startTestServer, type TestServer, testResolver } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let server: TestServer;
let alice: Api;
let bob: Api;
/** slow.example.com lookups started so far; each waits until `answerSlow` is called. */
let slowLookups = 0;
let answerSlow: () => void;
const slowAnswered = new Promise<void>((resolve) => (answerSlow = resolve));

beforeAll(async () => {
  // The resolver of test/support/server.ts: hooks*.example.com are public, the others are not.
  // slow.example.com answers when the test says so, so a request can be caught in flight.
  const resolve = async (host: string) => {
    if (host !== "slow.example.com") return testResolver(host);
    slowLookups++;
    await slowAnswered;
    return ["93.184.215.14"];
  };
  server = await startTestServer({}, { resolve });
  alice = api(server.url, (await server.createAccount("Alice")).apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
});
afterAll(() => {
  answerSlow();
  return server.stop();
});

const createEndpoint = (as: Api, url: unknown) => as("/api/v1/webhook_endpoints", { body: { url } });
const listEndpoints = async (as: Api) => {
  const res = await as("/api/v1/webhook_endpoints");
  expect(res.status).toBe(200);
  return res;
};

describe("POST /api/v1/webhook_endpoints", () => {
  test("201 with id, url, a whsec_ secret of 32 random bytes, created_at", async () => {
    const before = Date.now();
    const res = await createEndpoint(alice, "https://hooks.example.com/stablegate");
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toContain("application/json");
    const e = res.json;
    expect(e.id).toMatch(/^we_[0-9A-Za-z]+$/);
    expect(e.url).toBe("https://hooks.example.com/stablegate");
    expect(e.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const raw = Buffer.from(e.secret.slice("whsec_".length), "base64");
    expect(raw.length).toBe(32);
    expect(raw.toString("base64")).toBe(e.secret.slice("whsec_".length));
    expect(e.created_at).toMatch(ISO_MS);
    expect(Date.parse(e.created_at)).toBeGreaterThanOrEqual(before - 1);
  });

  test("each endpoint gets its own id and secret", async () => {
    const a = (await createEndpoint(alice, "https://hooks.example.com/a")).json;
    const b = (await createEndpoint(alice, "https://hooks.example.com/a")).json;
    expect(a.id).not.toBe(b.id);
    expect(a.secret).not.toBe(b.secret);
  });

  test("a host resolving to several public addresses (IPv4 and IPv6) is accepted", async () => {
    expect((await createEndpoint(alice, "https://hooks2.example.com/x")).status).toBe(201);
  });

  test("Idempotency-Key replays the creation instead of adding a second endpoint", async () => {
    const key = `we-${crypto.randomUUID()}`;
    const create = () =>
      alice("/api/v1/webhook_endpoints", {
        body: { url: "https://hooks.example.com/idem" },
        headers: { "idempotency-key": key },
      });
    const first = await create();
    const second = await create();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
    const list = await listEndpoints(alice);
    expect(list.json.data.filter((e: { url: string }) => e.url === "https://hooks.example.com/idem")).toHaveLength(1);
  });

  test("the replay carries the signing secret again (docs/webhooks.md: the only copy when the first answer was lost); the list never does", async () => {
    const key = `we-${crypto.randomUUID()}`;
    const create = () =>
      alice("/api/v1/webhook_endpoints", {
        body: { url: "https://hooks.example.com/lost" },
        headers: { "idempotency-key": key },
      });
    const first = await create();
    const replay = await create();
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(first.json.secret).toMatch(/^whsec_/);
    expect(replay.json.secret).toBe(first.json.secret);
    expect((await listEndpoints(alice)).text).not.toContain(first.json.secret);
  });
});

describe("POST /api/v1/webhook_endpoints: Idempotency-Key in flight", () => {
  test("the same key while the first request is still running is 409; afterwards it replays", async () => {
    const key = `slow-${crypto.randomUUID()}`;
    const create = () =>
      alice("/api/v1/webhook_endpoints", {
        body: { url: "https://slow.example.com/hook" },
        headers: { "idempotency-key": key },
      });
    const first = create();
    await waitFor(() => slowLookups === 1, 10_000, "the first request to claim the key and wait on DNS");
    const second = await create();
    expect(second.status).toBe(409);
    expect(isErrorBody(second.json)).toBe(true);
    answerSlow();
    const done = await first;
    expect(done.status).toBe(201);
    const replay = await create();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.json.id).toBe(done.json.id);
    const list = await listEndpoints(alice);
    expect(list.json.data.filter((e: { url: string }) => e.url === "https://slow.example.com/hook")).toHaveLength(1);
  });
});

describe("POST /api/v1/webhook_endpoints: URL rules (400)", () => {
  test.each([
    ["http", "http://hooks.example.com/x"],
    ["a private address (10/8)", "https://private.example.com/x"],
    ["loopback by name", "https://loopback.example.com/x"],
    ["loopback literal", "https://127.0.0.1/x"],
    ["localhost", "https://localhost/x"],
    ["IPv6 loopback literal", "https://[::1]/x"],
    ["link-local", "https://linklocal.example.com/x"],
    ["cloud metadata 169.254.169.254 by name", "https://metadata.example.com/latest/meta-data"],
    ["cloud metadata 169.254.169.254 literal", "https://169.254.169.254/latest/meta-data"],
    ["one public and one private address", "https://mixed.example.com/x"],
    ["IPv6 unique local", "https://ula.example.com/x"],
    ["IPv4-mapped IPv6 loopback", "https://[::ffff:127.0.0.1]/x"],
    ["decimal-encoded loopback", "https://2130706433/x"],
    ["an unresolvable host", "https://does-not-resolve.example.com/x"],
    ["credentials in the URL", "https://user:pass@hooks.example.com/x"],
    ["not a URL", "hooks.example.com/x"],
    ["an empty string", ""],
  ])("%s", async (_name, url) => {
    const before = (await listEndpoints(alice)).json.data.length;
    const res = await createEndpoint(alice, url);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect((await listEndpoints(alice)).json.data.length).toBe(before);
  });

  test.each([
    ["a missing url", {}],
    ["a url that is not a string", { url: 42 }],
    ["an unknown field", { url: "https://hooks.example.com/x", events: ["*"] }],
  ])("%s is 400", async (_name, body) => {
    const res = await alice("/api/v1/webhook_endpoints", { body });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("malformed JSON is 400", async () => {
    const res = await alice("/api/v1/webhook_endpoints", { body: "{url:" });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("the 17th endpoint of an account is 400; deleting one makes room", async () => {
    const carol = api(server.url, (await server.createAccount("Carol")).apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const res = await createEndpoint(carol, `https://hooks.example.com/${i}`);
      expect(res.status).toBe(201);
      ids.push(res.json.id);
    }
    const seventeenth = await createEndpoint(carol, "https://hooks.example.com/16");
    expect(seventeenth.status).toBe(400);
    expect(isErrorBody(seventeenth.json)).toBe(true);
    expect((await listEndpoints(carol)).json.data).toHaveLength(16);
    expect((await carol(`/api/v1/webhook_endpoints/${ids[0]}`, { method: "DELETE" })).status).toBe(200);
    expect((await createEndpoint(carol, "https://hooks.example.com/16")).status).toBe(201);
  });
});

describe("GET /api/v1/webhook_endpoints", () => {
  test("200 {data, has_more}; items carry id, url, created_at and never the secret", async () => {
    const dave = api(server.url, (await server.createAccount("Dave")).apiKey);
    const a = (await createEndpoint(dave, "https://hooks.example.com/one")).json;
    const b = (await createEndpoint(dave, "https://hooks.example.com/two")).json;
    const res = await listEndpoints(dave);
    expect(res.json.has_more).toBe(false);
    expect(res.json.data).toHaveLength(2);
    expect(res.json.data.map((e: { id: string }) => e.id).sort()).toEqual([a.id, b.id].sort());
    for (const e of res.json.data) {
      expect(typeof e.id).toBe("string");
      expect(typeof e.url).toBe("string");
      expect(e.created_at).toMatch(ISO_MS);
      expect(e).not.toHaveProperty("secret");
    }
    expect(res.text).not.toContain(a.secret);
    expect(res.text).not.toContain(b.secret);
    expect(res.text).not.toContain("whsec_");
  });

  test("a new account lists nothing", async () => {
    const erin = api(server.url, (await server.createAccount("Erin")).apiKey);
    const res = await listEndpoints(erin);
    expect(res.json.data).toEqual([]);
    expect(res.json.has_more).toBe(false);
  });
});

describe("DELETE /api/v1/webhook_endpoints/{id}", () => {
  test("200 {id, deleted: true}; then gone from the list; a second delete is 404", async () => {
    const e = (await createEndpoint(alice, "https://hooks.example.com/delete-me")).json;
    const res = await alice(`/api/v1/webhook_endpoints/${e.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(e.id);
    expect(res.json.deleted).toBe(true);
    const list = await listEndpoints(alice);
    expect(list.json.data.map((x: { id: string }) => x.id)).not.toContain(e.id);
    const again = await alice(`/api/v1/webhook_endpoints/${e.id}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(isErrorBody(again.json)).toBe(true);
  });

  test("an unknown id is 404", async () => {
    const res = await alice("/api/v1/webhook_endpoints/we_doesnotexist", { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("webhook endpoints: security", () => {
  test("another account's endpoint is not listed and cannot be deleted (404, like an unknown one)", async () => {
    const e = (await createEndpoint(alice, "https://hooks.example.com/alice-private")).json;
    const bobList = await listEndpoints(bob);
    expect(bobList.text).not.toContain(e.id);
    expect(bobList.text).not.toContain("alice-private");

    const foreign = await bob(`/api/v1/webhook_endpoints/${e.id}`, { method: "DELETE" });
    expect(foreign.status).toBe(404);
    expect(isErrorBody(foreign.json)).toBe(true);
    const unknownId = "we_000000000000000000000000";
    const unknown = await bob(`/api/v1/webhook_endpoints/${unknownId}`, { method: "DELETE" });
    expect(foreign.text.replaceAll(e.id, "<id>")).toBe(unknown.text.replaceAll(unknownId, "<id>"));

    // Still there for its owner.
    const aliceList = await listEndpoints(alice);
    expect(aliceList.json.data.map((x: { id: string }) => x.id)).toContain(e.id);
  });

  test("without an API key every operation is 401", async () => {
    const anon = api(server.url, null);
    expect((await anon("/api/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/x" } })).status).toBe(
      401,
    );
    expect((await anon("/api/v1/webhook_endpoints")).status).toBe(401);
    expect((await anon("/api/v1/webhook_endpoints/we_x", { method: "DELETE" })).status).toBe(401);
  });
});
