/**
 * GET /api/v1/events/stream: the account's events as Server-Sent Events, pushed as they are
 * written, resumable after any event, ending cleanly with the client or the server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HEARTBEAT_MS, MAX_STREAMS_PER_ACCOUNT, MAX_STREAMS_PER_KEY } from "../../src/events/feed.ts";
import { createLogger } from "../../src/lib/log.ts";
import { runCli } from "../support/cli.ts";
import { type EventStreamClient, openEventStream } from "../support/event-stream.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { api, isErrorBody, startTestServer, type TestAccount, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";
import { startDeliveryServer } from "../support/webhook-delivery.ts";

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = startReceiver();
  server = await startDeliveryServer();
});
afterAll(async () => {
  await server?.stop();
  receiver?.stop();
});

/** An account with a webhook endpoint, and a way to make its events: test pings. */
async function merchant(name: string) {
  const account: TestAccount = await server.createAccount(name);
  const call = api(server.url, account.apiKey);
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: receiver.url } });
  expect(endpoint.status).toBe(201);
  /** A test ping; `key` another key of the account than its first. */
  const ping = async (key = account.apiKey): Promise<string> => {
    const sent = await api(server.url, key)(`/api/v1/webhook_endpoints/${endpoint.json.id}/test`, { method: "POST" });
    expect(sent.status).toBe(202);
    return sent.json.event_id;
  };
  const payload = async (id: string) => (await call(`/api/v1/events/${id}`)).text;
  return { account, call, ping, payload };
}

const streamsClosed = () => waitFor(() => server.running.activity().eventStreams === 0, 10_000, "no open streams");

/**
 * Another API key of the account, issued as an operator does: `stablegate key create`, in a process
 * of its own (in this one, its SQLite connection could wait, blocking the thread, for a transaction
 * of the server's that cannot go on meanwhile).
 */
async function newKey(accountId: string): Promise<{ id: string; apiKey: string }> {
  const created = await runCli(["key", "create", "--account", accountId], server.env);
  expect(created.code).toBe(0);
  const key = JSON.parse(created.stdout) as { id: string; api_key: string };
  return { id: key.id, apiKey: key.api_key };
}

/** A stream with `key` once a place is free again (a closed stream is let go a moment after the client leaves). */
const reopened = (key: string) =>
  waitFor(async () => {
    const res = await openEventStream(server.url, key);
    if (res.status === 200) return res;
    await res.close();
    return null;
  });

/** Resolves true once the server has ended `stream`, false if it is still open after `ms`. */
async function endsWithin(stream: EventStreamClient, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const ended = await Promise.race([stream.ended.then(() => true as const), late]);
  clearTimeout(timer);
  return ended;
}

describe("the event stream", () => {
  test("pushes new events in order, each as id, type and the exact JSON the API serves", async () => {
    const shop = await merchant("Stream Shop");
    const before = await shop.ping(); // written before the stream opens: not sent
    const stream = await openEventStream(server.url, shop.account.apiKey);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toStartWith("text/event-stream");
    expect(stream.headers.get("cache-control")).toBe("no-cache");
    // It names where it starts: after the newest event there was.
    await waitFor(() => stream.frames.length > 0, 10_000, "the opening frame");
    expect(stream.frames[0]).toEqual({ id: before });

    const ids = [await shop.ping(), await shop.ping(), await shop.ping()];
    const frames = await stream.waitForEvents(3);
    expect(frames.map((f) => f.id)).toEqual(ids);
    for (const frame of frames) {
      expect(frame.event).toBe("test");
      expect(frame.data).toBe(await shop.payload(frame.id!));
    }
    await stream.close();
    await streamsClosed();
  });

  test("a payment's status change arrives as it is written (the lifecycle wakes the stream)", async () => {
    const shop = await merchant("Lifecycle Shop");
    const stream = await openEventStream(server.url, shop.account.apiKey);
    const payment = await shop.call("/api/v1/payments", { body: { amount: "1.00" } });
    expect(payment.status).toBe(201);
    // The delivery server's payments expire after 1 s.
    const [frame] = await stream.waitForEvents(1, "payment.expired on the stream");
    expect(frame!.event).toBe("payment.expired");
    expect(JSON.parse(frame!.data!).data.payment.id).toBe(payment.json.id);
    expect(frame!.data).toBe(await shop.payload(frame!.id!));
    await stream.close();
  });

  test("an event written by another process (the CLI) arrives too", async () => {
    const shop = await merchant("CLI Shop");
    const stream = await openEventStream(server.url, shop.account.apiKey);
    const set = await runCli(
      ["account", "set-payout", shop.account.accountId, "0x2222222222222222222222222222222222222222"],
      server.env,
    );
    expect(set.code).toBe(0);
    const [frame] = await stream.waitForEvents(1, "account.updated on the stream");
    expect(frame!.event).toBe("account.updated");
    await stream.close();
  });

  test("Last-Event-ID resumes exactly after that event, as does ?after=", async () => {
    const shop = await merchant("Resume Shop");
    const ids = [await shop.ping(), await shop.ping(), await shop.ping(), await shop.ping()];
    const byHeader = await openEventStream(server.url, shop.account.apiKey, { lastEventId: ids[1] });
    const byQuery = await openEventStream(server.url, shop.account.apiKey, { query: `?after=${ids[0]}` });
    expect((await byHeader.waitForEvents(2)).map((f) => f.id)).toEqual(ids.slice(2));
    expect((await byQuery.waitForEvents(3)).map((f) => f.id)).toEqual(ids.slice(1));
    expect(byHeader.frames[0]).toEqual({ id: ids[1] });
    // Nothing more than those: a new ping is the next frame with data on both.
    const next = await shop.ping();
    expect((await byHeader.waitForEvents(3)).map((f) => f.id)).toEqual([...ids.slice(2), next]);
    expect((await byQuery.waitForEvents(4)).map((f) => f.id)).toEqual([...ids.slice(1), next]);
    await Promise.all([byHeader.close(), byQuery.close()]);
  });

  test("an unknown or malformed resume point is a 400 naming it", async () => {
    await streamsClosed();
    const shop = await merchant("Bad Resume Shop");
    const stranger = await merchant("Other Shop");
    const theirs = await stranger.ping();
    const cases: Array<[{ lastEventId?: string; query?: string }, string]> = [
      [{ lastEventId: theirs }, `Last-Event-ID: no event ${theirs}`],
      [{ query: `?after=${theirs}` }, `after: no event ${theirs}`],
      [{ lastEventId: "nonsense" }, "Last-Event-ID must be the id of an event"],
      [{ query: "?after=nonsense" }, "after must be the id of an event"],
    ];
    for (const [opts, error] of cases) {
      const res = await openEventStream(server.url, shop.account.apiKey, opts);
      expect({ status: res.status, body: JSON.parse(res.text) }).toEqual({ status: 400, body: { error } });
    }
    expect(server.running.activity().eventStreams).toBe(0);
  });

  test("no key is 401, and another account's events never appear", async () => {
    const refused = await openEventStream(server.url, `sk_live_${"A".repeat(32)}`);
    expect(refused.status).toBe(401);
    expect(isErrorBody(JSON.parse(refused.text))).toBe(true);

    const mine = await merchant("Mine Shop");
    const theirs = await merchant("Theirs Shop");
    const stream = await openEventStream(server.url, mine.account.apiKey);
    await theirs.ping();
    await theirs.ping();
    const own = await mine.ping();
    expect((await stream.waitForEvents(1)).map((f) => f.id)).toEqual([own]);
    // Their pings were written first; had the stream carried them, they would precede ours.
    expect(stream.events().map((f) => f.id)).toEqual([own]);
    await stream.close();
  });

  test(`at most ${MAX_STREAMS_PER_KEY} open streams per key, another key of the account may open more`, async () => {
    const shop = await merchant("Keyed Shop");
    const open = [];
    for (let i = 0; i < MAX_STREAMS_PER_KEY; i++) open.push(await openEventStream(server.url, shop.account.apiKey));
    expect(open.map((s) => s.status)).toEqual(Array(MAX_STREAMS_PER_KEY).fill(200));
    const refused = await openEventStream(server.url, shop.account.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(JSON.parse(refused.text).error).toBe(
      `at most ${MAX_STREAMS_PER_KEY} event streams may be open per API key; close one first`,
    );
    const other = await openEventStream(server.url, (await newKey(shop.account.accountId)).apiKey);
    expect(other.status).toBe(200);

    await open.pop()!.close();
    const again = await reopened(shop.account.apiKey);
    await Promise.all([...open, other, again].map((s) => s.close()));
    await streamsClosed();
  });

  test(`at most ${MAX_STREAMS_PER_ACCOUNT} open streams per account, whatever its keys; closing one frees its place`, async () => {
    const shop = await merchant("Busy Shop");
    const keys = [
      shop.account.apiKey,
      (await newKey(shop.account.accountId)).apiKey,
      (await newKey(shop.account.accountId)).apiKey,
    ];
    const open = [];
    for (let i = 0; i < MAX_STREAMS_PER_ACCOUNT; i++)
      open.push(await openEventStream(server.url, keys[Math.floor(i / MAX_STREAMS_PER_KEY)]!));
    expect(open.map((s) => s.status)).toEqual(Array(MAX_STREAMS_PER_ACCOUNT).fill(200));
    const fresh = (await newKey(shop.account.accountId)).apiKey;
    const refused = await openEventStream(server.url, fresh);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(JSON.parse(refused.text).error).toContain(`at most ${MAX_STREAMS_PER_ACCOUNT} event streams`);
    // Another account is not affected.
    const other = await merchant("Calm Shop");
    const theirs = await openEventStream(server.url, other.account.apiKey);
    expect(theirs.status).toBe(200);

    await open.pop()!.close();
    const again = await reopened(fresh);
    await Promise.all([...open, again, theirs].map((s) => s.close()));
  });

  test("a client that disconnects leaves no stream, timer or listener behind", async () => {
    const shop = await merchant("Leaving Shop");
    const keys = [shop.account.apiKey, shop.account.apiKey, (await newKey(shop.account.accountId)).apiKey];
    const streams = await Promise.all(keys.map((key) => openEventStream(server.url, key)));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    expect(server.running.activity().eventStreams).toBeGreaterThanOrEqual(3);
    await Promise.all(streams.map((s) => s.close()));
    await streamsClosed();
    // And the server goes on writing events without anyone to wake.
    await shop.ping();
  });
});

describe("a revoked key", () => {
  test("ends its stream when another process revokes it: nothing written after goes out, the key is refused, its place is free", async () => {
    const shop = await merchant("Revoked Shop");
    const other = await newKey(shop.account.accountId);
    const stream = await openEventStream(server.url, shop.account.apiKey);
    const before = await shop.ping();
    expect((await stream.waitForEvents(1)).map((f) => f.id)).toEqual([before]);

    // `stablegate key revoke` beside the server, as an operator runs it: only the database knows.
    const revoked = await runCli(["key", "revoke", shop.account.keyId], server.env);
    expect(revoked.code).toBe(0);
    // An event of the account written after that (through its other key) wakes the stream at once.
    const after = await shop.ping(other.apiKey);

    expect(await endsWithin(stream, 10_000)).toBe(true);
    expect(stream.events().map((f) => f.id)).toEqual([before]);
    expect(stream.events().map((f) => f.id)).not.toContain(after);

    const refused = await openEventStream(server.url, shop.account.apiKey);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toEqual({ error: "invalid API key" });
    // Its place is free: the account's every place opens again, through its other keys.
    await streamsClosed();
    const keys = [
      other.apiKey,
      (await newKey(shop.account.accountId)).apiKey,
      (await newKey(shop.account.accountId)).apiKey,
    ];
    const all = await Promise.all(
      Array.from({ length: MAX_STREAMS_PER_ACCOUNT }, (_, i) =>
        openEventStream(server.url, keys[Math.floor(i / MAX_STREAMS_PER_KEY)]!),
      ),
    );
    expect(all.map((s) => s.status)).toEqual(Array(MAX_STREAMS_PER_ACCOUNT).fill(200));
    await Promise.all(all.map((s) => s.close()));
  });

  test(`an idle stream of a revoked key ends too, well before a ${HEARTBEAT_MS / 1000} s heartbeat`, async () => {
    const shop = await merchant("Idle Revoked Shop");
    const stream = await openEventStream(server.url, shop.account.apiKey);
    expect(stream.status).toBe(200);
    expect((await runCli(["key", "revoke", shop.account.keyId], server.env)).code).toBe(0);
    expect(await endsWithin(stream, HEARTBEAT_MS / 2)).toBe(true);
    expect(stream.events()).toEqual([]);
    await streamsClosed();
  });

  test("ends with a comment saying why (a client of its own sees it), on a server with a short heartbeat", async () => {
    const own = await startTestServer({}, { eventHeartbeatMs: 100 });
    try {
      const account = await own.createAccount("Heartbeat Shop");
      const stream = await openEventStream(own.url, account.apiKey);
      await waitFor(() => stream.frames.some((f) => f.comment === "ping"), 10_000, "a heartbeat comment");
      expect((await runCli(["key", "revoke", account.keyId], own.env)).code).toBe(0);
      expect(await endsWithin(stream, 10_000)).toBe(true);
      expect(stream.frames.at(-1)).toEqual({ comment: "the API key no longer authenticates" });
      await waitFor(() => own.running.activity().eventStreams === 0, 10_000, "the stream let go");
    } finally {
      await own.stop();
    }
  });
});

describe("keeping the stream open, and ending it", () => {
  test("an idle stream sends a heartbeat comment so proxies keep it open", async () => {
    // A server of its own with a short heartbeat, rather than 15 s of waiting on the shared one.
    const own = await startTestServer({}, { eventHeartbeatMs: 200 });
    try {
      const stream = await openEventStream(own.url, (await own.createAccount("Idle Shop")).apiKey);
      await waitFor(() => stream.frames.some((f) => f.comment === "ping"), 15_000, "a heartbeat comment", 50);
      await stream.close();
    } finally {
      await own.stop();
    }
  });

  test("server shutdown ends open streams at once, without running into the shutdown deadline", async () => {
    const lines: string[] = [];
    const own = await startTestServer({}, { log: createLogger("warn", (line) => lines.push(line)) });
    let stopped = false;
    try {
      const account = await own.createAccount("Closing Shop");
      const streams = await Promise.all([1, 2].map(() => openEventStream(own.url, account.apiKey)));
      expect(streams.map((s) => s.status)).toEqual([200, 200]);
      await own.stop();
      stopped = true;
      // Both ended by the server (close() would only abort a stream still open).
      await Promise.all(streams.map((s) => s.ended));
      expect(lines.filter((line) => line.includes("shutdown deadline reached"))).toEqual([]);
    } finally {
      if (!stopped) await own.stop();
    }
  });
});
