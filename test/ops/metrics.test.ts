/**
 * GET /metrics over real HTTP against the real server and its SQLite file: scraped, parsed as
 * Prometheus text, and checked against what the test did (payments created, requests made,
 * webhooks refused). Watcher lag, relayer gas and the bridging queue per chain are checked on
 * real anvils at the end.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { privateKeyToAccount } from "viem/accounts";
import { GAS_REFRESH_MS } from "../../src/chain/relayer-gas.ts";
import { loadConfig } from "../../src/config.ts";
import { MAX_BODY_BYTES } from "../../src/http/body.ts";
import { ConfigError } from "../../src/lib/errors.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { silentLogger } from "../../src/lib/log.ts";
import type { NewPaymentRow } from "../../src/payments/store.ts";
import { startServer } from "../../src/server.ts";
import { ANVIL_KEY_2 } from "../support/anvil.ts";
import { bridgesOf, payOnSource } from "../support/bridging.ts";
import { LOCAL_SOURCE, startCrossChainStack } from "../support/crosschain.ts";
import { openEventStream } from "../support/event-stream.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { type Exposition, parseExposition } from "../support/prometheus.ts";
import { startReceiver } from "../support/receiver.ts";
import {
  type Api,
  api,
  isErrorBody,
  makeTempDir,
  startTestServer,
  type TestServer,
  testEnv,
} from "../support/server.ts";
import { startStack } from "../support/stack.ts";
import { ENGINES, openTestStore } from "../support/store-engines.ts";
import { usdc } from "../support/test-chain.ts";
import { waitFor, webhookWorkerRanSince } from "../support/wait.ts";

const TOKEN = "scrape-me-0123456789abcdef";
const unknownPaymentId = () => `0x${randomBytes(32).toString("hex")}`;

let server: TestServer;
let merchant: Api;

beforeAll(async () => {
  server = await startTestServer(
    { webhookAllowPrivate: true, metrics: { listen: null, token: TOKEN } },
    // A failed webhook is retried an hour later: it stays in the queue while the test looks.
    { webhookSchedule: [0, 3_600_000], webhookTimeoutMs: 2_000 },
  );
  merchant = api(server.url, (await server.createAccount("Metrics Shop")).apiKey);
});
afterAll(() => server.stop());

async function scrape(url = server.url, token: string | null = TOKEN): Promise<Exposition> {
  const res = await api(url, token)("/metrics");
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text}`);
  return parseExposition(res.text);
}

/** Requests answered so far on `route` (the pattern) with `status`. */
const answered = (e: Exposition, method: string, route: string, status: number) =>
  e.value("stablegate_http_requests_total", { method, route, status: String(status) }) ?? 0;

describe("the test's reader of the format", () => {
  test("unescapes label values and refuses what Prometheus would refuse", () => {
    const good = parseExposition(
      '# HELP x_total A count.\n# TYPE x_total counter\nx_total{a="q\\"b\\\\c\\nd",b="2"} 3\n',
    );
    expect(good.value("x_total", { a: 'q"b\\c\nd', b: "2" })).toBe(3);
    expect(good.value("x_total", { a: 'q"b\\c\nd' })).toBeUndefined();
    for (const bad of ["x_total 1", "# TYPE x_total counter\nx_total{a=1} 1", "# TYPE x_total counter\nx_total one"])
      expect(() => parseExposition(bad)).toThrow();
  });
});

describe("switched on and off", () => {
  test("off by default: /metrics is 404 {error}, as any unknown route", async () => {
    expect(loadConfig(testEnv("/tmp/unused")).metrics).toBeNull();
    const plain = await startTestServer();
    try {
      const res = await api(plain.url, null)("/metrics");
      expect(res.status).toBe(404);
      expect(isErrorBody(res.json)).toBe(true);
    } finally {
      await plain.stop();
    }
  });

  test("without the token, or with a wrong one, 401 {error} and no figure", async () => {
    for (const authorization of [
      null,
      "Bearer wrong",
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${btoa(`metrics:${TOKEN}`)}`,
      TOKEN,
    ]) {
      const res = await api(server.url, null)("/metrics", { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(isErrorBody(res.json)).toBe(true);
      expect(res.text).not.toContain("stablegate_");
    }
  });

  test("with the token: 200, text format 0.0.4, every family named stablegate_* with its help", async () => {
    // The scheme is matched whatever its case.
    const res = await api(server.url, null)("/metrics", { headers: { authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const exposition = parseExposition(res.text);
    expect([...exposition.families.keys()].sort()).toEqual([
      "stablegate_bridging_queue_depth",
      "stablegate_http_request_duration_seconds",
      "stablegate_http_requests_total",
      "stablegate_lease_held",
      "stablegate_payments",
      "stablegate_relayer_gas_balance_wei",
      "stablegate_settlement_queue_depth",
      "stablegate_watcher_lag_blocks",
      "stablegate_webhook_delivery_failures_total",
      "stablegate_webhook_queue_depth",
    ]);
    for (const family of exposition.families.values()) expect(family.help?.length).toBeGreaterThan(10);
    // The only server on its store holds the chain lease.
    expect(exposition.value("stablegate_lease_held", { lease: "chain" })).toBe(1);
  });
});

describe("HTTP requests", () => {
  test("creating N payments: pending rises by N, and the create route counts N answers of 201", async () => {
    const N = 7;
    const before = await scrape();
    for (let i = 0; i < N; i++)
      expect((await merchant("/api/v1/payments", { body: { amount: "5.00" } })).status).toBe(201);
    const after = await scrape();
    expect(after.value("stablegate_payments", { status: "pending" })).toBe(
      before.value("stablegate_payments", { status: "pending" })! + N,
    );
    expect(answered(after, "POST", "/api/v1/payments", 201) - answered(before, "POST", "/api/v1/payments", 201)).toBe(
      N,
    );
    // Every status is present, at 0 when no payment has it.
    expect(after.value("stablegate_payments", { status: "failed" })).toBe(0);
  });

  test("a 404 on an unknown payment counts under the route pattern; the id is no label value", async () => {
    const id = unknownPaymentId();
    const before = await scrape();
    expect((await merchant(`/api/v1/payments/${id}`)).status).toBe(404);
    const { text } = await api(server.url, TOKEN)("/metrics");
    expect(text).not.toContain(id);
    const after = parseExposition(text);
    expect(
      answered(after, "GET", "/api/v1/payments/:id", 404) - answered(before, "GET", "/api/v1/payments/:id", 404),
    ).toBe(1);
  });

  test("unknown routes and odd methods count under one label each, whatever the path", async () => {
    const before = await scrape();
    const paths = [`/nope/${unknownPaymentId()}`, `/wp-admin/${randomBytes(8).toString("hex")}.php`];
    const anonymous = api(server.url, null);
    for (const path of paths) expect((await anonymous(path)).status).toBe(404);
    expect((await anonymous("/nope", { method: "PROPFIND" })).status).toBe(404);
    const { text } = await api(server.url, TOKEN)("/metrics");
    for (const path of paths) expect(text).not.toContain(path);
    expect(text).not.toContain("PROPFIND");
    const after = parseExposition(text);
    expect(answered(after, "GET", "unmatched", 404) - answered(before, "GET", "unmatched", 404)).toBe(2);
    expect(answered(after, "OTHER", "unmatched", 404) - answered(before, "OTHER", "unmatched", 404)).toBe(1);
  });

  test("refusals count with their own status: 401, 400, and 413 before any route is matched", async () => {
    const before = await scrape();
    expect((await api(server.url, "sk_live_nope")("/api/v1/payments", { body: { amount: "1.00" } })).status).toBe(401);
    expect((await merchant("/api/v1/payments", { body: { amount: "1" } })).status).toBe(400);
    const tooLarge = await fetch(`${server.url}/api/v1/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 1) },
      body: "x".repeat(MAX_BODY_BYTES + 1),
    });
    expect(tooLarge.status).toBe(413);
    const after = await scrape();
    const rose = (method: string, route: string, status: number) =>
      answered(after, method, route, status) - answered(before, method, route, status);
    expect(rose("POST", "/api/v1/payments", 401)).toBe(1);
    expect(rose("POST", "/api/v1/payments", 400)).toBe(1);
    expect(rose("POST", "unmatched", 413)).toBe(1);
  });

  test("latency histogram: buckets cumulative, +Inf equal to _count, _count equal to the requests counted", async () => {
    // Series of its own, so the check holds whichever tests ran before it.
    await merchant("/api/v1/payments");
    await merchant("/api/v1/payments", { body: { amount: "1.00" } });
    await api(server.url, null)("/healthz");
    await api(server.url, null)("/no-such-route");
    await scrape();
    const exposition = await scrape();
    const buckets = exposition.samples.filter((s) => s.name === "stablegate_http_request_duration_seconds_bucket");
    const series = new Map<string, typeof buckets>();
    for (const bucket of buckets) {
      const { le: _, ...labels } = bucket.labels;
      const key = JSON.stringify(labels);
      series.set(key, [...(series.get(key) ?? []), bucket]);
    }
    expect(series.size).toBeGreaterThan(3);
    for (const [key, list] of series) {
      const labels = JSON.parse(key) as { method: string; route: string };
      const bounds = list.map((b) => (b.labels.le === "+Inf" ? Infinity : Number(b.labels.le)));
      expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
      expect(bounds.at(-1)).toBe(Infinity);
      const counts = list.map((b) => b.value);
      for (let i = 1; i < counts.length; i++) expect(counts[i]!).toBeGreaterThanOrEqual(counts[i - 1]!);
      const count = exposition.value("stablegate_http_request_duration_seconds_count", labels);
      expect(counts.at(-1)).toBe(count!);
      expect(exposition.value("stablegate_http_request_duration_seconds_sum", labels)).toBeGreaterThan(0);
      // The scrape being answered is counted once it is sent, after this text was written.
      const requests = exposition.samples
        .filter((s) => s.name === "stablegate_http_requests_total")
        .filter((s) => s.labels.method === labels.method && s.labels.route === labels.route)
        .reduce((sum, s) => sum + s.value, 0);
      expect(count).toBe(requests);
    }
  });
});

describe("streamed answers", () => {
  test("the event stream and the CSV export each count once, whatever they stream", async () => {
    const key = (await server.createAccount("Streaming Shop")).apiKey;
    const before = await scrape();
    const stream = await openEventStream(server.url, key);
    expect(stream.status).toBe(200);
    // An event on the open stream: the answer goes on after its headers were counted.
    const created = await api(server.url, key)("/api/v1/payments", { body: { amount: "2.00" } });
    expect(created.status).toBe(201);
    await waitFor(() => stream.frames.length > 0, 10_000, "a frame on the stream");
    await stream.close();
    await waitFor(() => server.running.activity().eventStreams === 0, 10_000, "the stream closed on the server");
    const csv = await api(server.url, key)("/api/v1/payments.csv");
    expect(csv.status).toBe(200);
    expect(csv.text).toContain(created.json.id);
    const after = await scrape();
    const rose = (route: string) => answered(after, "GET", route, 200) - answered(before, "GET", route, 200);
    expect(rose("/api/v1/events/stream")).toBe(1);
    expect(rose("/api/v1/payments.csv")).toBe(1);
  });
});

describe("webhooks", () => {
  test("failed deliveries count by endpoint id, and the pending ones make the queue depth", async () => {
    const receiver = startReceiver();
    try {
      const shop = api(server.url, (await server.createAccount("Webhook Shop")).apiKey);
      const register = async (path: string) =>
        (await shop("/api/v1/webhook_endpoints", { body: { url: `${receiver.url}${path}` } })).json.id as string;
      const failing = await register("/failing");
      const healthy = await register("/healthy");
      receiver.answer = (req) =>
        new Response("no", { status: new URL(req.url).pathname.endsWith("/failing") ? 500 : 200 });
      const before = await scrape();
      const queued = before.value("stablegate_webhook_queue_depth")!;
      for (const endpoint of [failing, failing, healthy])
        expect((await shop(`/api/v1/webhook_endpoints/${endpoint}/test`, { method: "POST" })).status).toBe(202);
      const failures = (e: Exposition, endpoint: string) =>
        e.value("stablegate_webhook_delivery_failures_total", { endpoint_id: endpoint });
      // Attempts are recorded after the answers arrive: wait for all three to be.
      const after = await waitFor(
        async () => {
          const e = await scrape();
          return failures(e, failing) === 2 && e.value("stablegate_webhook_queue_depth") === queued + 2 && e;
        },
        15_000,
        "two failed attempts counted, the healthy delivery done",
      );
      expect(receiver.hits.length).toBe(3);
      expect(failures(after, healthy)).toBeUndefined();
      // The two failed deliveries wait an hour for their retry: still in the queue, not counted again.
      await webhookWorkerRanSince(server.running);
      const later = await scrape();
      expect(failures(later, failing)).toBe(2);
      expect(later.value("stablegate_webhook_queue_depth")).toBe(queued + 2);
    } finally {
      receiver.stop();
    }
  });
});

describe.each(ENGINES)("settlement queue (%s)", (engine) => {
  test("counts the payments holding funds not yet swept, in every state that has some", async () => {
    const { db, close } = await openTestStore(engine);
    try {
      const store = createPaymentStore(db);
      const account = await insertAccount(db, "acct_queue");
      const add = (fields: Partial<NewPaymentRow>) => insertPayment(store, paymentRow(account, 1, fields));
      const paid = { amount_received: 25_000_000n };
      await add({}); // nothing received
      await add({ status: "underpaid", amount_received: 10_000_000n }); // waits for the rest
      await add({ status: "expired" }); // nothing to sweep
      await add(paid); // funded: to settle
      await add({ status: "expired", ...paid }); // paid late: to settle
      await add({ status: "settling", ...paid }); // sent, not mined yet
      await add({ status: "failed", ...paid }); // to send again
      await add({ status: "overpaid", amount_received: 30_000_000n });
      const swept = await add({ status: "confirmed", ...paid });
      const toppedUp = await add({ status: "confirmed", ...paid });
      await store.recordSettled(swept.id, 25_000_000n, 2);
      await store.recordSettled(toppedUp.id, 20_000_000n, 2); // 5.00 arrived after the sweep
      expect(await store.countUnswept()).toBe(6);
    } finally {
      await close();
    }
  });
});

describe("a listener of its own (STABLEGATE_METRICS_ADDR)", () => {
  test("serves /metrics alone, with no token unless one is set; the main port has none", async () => {
    const port = await freePort();
    const own = await startTestServer({ metrics: { listen: { host: "127.0.0.1", port }, token: null } });
    try {
      const metricsUrl = `http://127.0.0.1:${port}`;
      expect((await api(own.url, null)("/metrics")).status).toBe(404);
      expect((await api(own.url, null)("/healthz")).status).toBe(200);
      await scrape(metricsUrl, null);
      const exposition = await scrape(metricsUrl, null);
      expect(answered(exposition, "GET", "/healthz", 200)).toBe(1);
      expect(answered(exposition, "GET", "unmatched", 404)).toBe(1); // the main port's /metrics
      // Its own scrapes are not traffic of the main port.
      expect(exposition.samples.filter((s) => s.labels.route === "/metrics")).toEqual([]);
      for (const [method, path] of [
        ["GET", "/healthz"],
        ["GET", "/api/v1/payments"],
        ["POST", "/metrics"],
      ] as const) {
        const res = await api(metricsUrl, null)(path, { method });
        expect(res.status).toBe(404);
        expect(isErrorBody(res.json)).toBe(true);
      }
    } finally {
      await own.stop();
    }
    // Stopped with the server: the port is free again.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null))?.status).toBeUndefined();
  });

  test("an address in use fails start-up naming STABLEGATE_METRICS_ADDR, and leaves the data dir free", async () => {
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
    const dataDir = makeTempDir();
    try {
      const config = { ...loadConfig(testEnv(dataDir)), host: "127.0.0.1", port: await freePort() };
      const listen = { host: "127.0.0.1", port: taken.port! };
      await expect(startServer({ ...config, metrics: { listen, token: null } }, { log: silentLogger })).rejects.toThrow(
        `cannot listen on 127.0.0.1:${taken.port}: the port is in use (STABLEGATE_METRICS_ADDR)`,
      );
      // Nothing of the failed start is left: neither the API's port nor the data directory's lock.
      expect(await fetch(`http://127.0.0.1:${config.port}/healthz`).catch(() => "refused")).toBe("refused");
      const again = await startServer(config, { log: silentLogger });
      await again.stop();
    } finally {
      taken.stop(true);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("configuration", () => {
  const env = (vars: Record<string, string>) => ({ ...testEnv("/tmp/unused"), ...vars });
  const refusal = (vars: Record<string, string>) => {
    try {
      loadConfig(env(vars));
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error(`accepted ${JSON.stringify(vars)}`);
  };

  test("on the main port a token is required, of 16 printable characters at least, never echoed", () => {
    expect(refusal({ STABLEGATE_METRICS: "on" })).toStartWith("STABLEGATE_METRICS_TOKEN: required when /metrics");
    const short = "tooShort1234567";
    expect(refusal({ STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: short })).toBe(
      "STABLEGATE_METRICS_TOKEN: must be at least 16 printable characters with no spaces",
    );
    expect(refusal({ STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: "has a space in it, 1234" })).not.toContain(
      "space in it",
    );
    expect(loadConfig(env({ STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: TOKEN })).metrics).toEqual({
      listen: null,
      token: TOKEN,
    });
    expect(refusal({ STABLEGATE_METRICS: "maybe" })).toBe('STABLEGATE_METRICS: must be on or off, got "maybe"');
    expect(loadConfig(env({ STABLEGATE_METRICS: "off", STABLEGATE_METRICS_TOKEN: TOKEN })).metrics).toBeNull();
  });

  test("the token is read and checked with /metrics off too: it also unlocks /readyz's details", () => {
    expect(loadConfig(env({ STABLEGATE_METRICS_TOKEN: TOKEN })).metricsToken).toBe(TOKEN);
    expect(loadConfig(env({ STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: TOKEN })).metricsToken).toBe(TOKEN);
    expect(loadConfig(env({})).metricsToken).toBeNull();
    expect(refusal({ STABLEGATE_METRICS_TOKEN: "tooShort1234567" })).toBe(
      "STABLEGATE_METRICS_TOKEN: must be at least 16 printable characters with no spaces",
    );
  });

  test("STABLEGATE_METRICS_ADDR: host:port or [ipv6]:port, token optional, not with STABLEGATE_METRICS=off", () => {
    expect(loadConfig(env({ STABLEGATE_METRICS_ADDR: "127.0.0.1:9464" })).metrics).toEqual({
      listen: { host: "127.0.0.1", port: 9464 },
      token: null,
    });
    expect(
      loadConfig(
        env({ STABLEGATE_METRICS_ADDR: "[::1]:9464", STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: TOKEN }),
      ).metrics,
    ).toEqual({ listen: { host: "::1", port: 9464 }, token: TOKEN });
    for (const bad of ["9464", "localhost", "127.0.0.1:0", "127.0.0.1:70000", "::1:9464", "bad host:1"])
      expect(refusal({ STABLEGATE_METRICS_ADDR: bad })).toStartWith("STABLEGATE_METRICS_ADDR: must be");
    expect(refusal({ STABLEGATE_METRICS_ADDR: "127.0.0.1:9464", STABLEGATE_METRICS: "off" })).toStartWith(
      "STABLEGATE_METRICS_ADDR: is set while STABLEGATE_METRICS is off",
    );
  });
});

describe("on a real chain", () => {
  test("watcher lag and relayer gas per chain follow what the loops last saw", async () => {
    const stack = await startStack({ env: { STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: TOKEN } });
    try {
      const chain = stack.config.chain.name;
      const relayer = privateKeyToAccount(ANVIL_KEY_2).address;
      // Ahead of the watcher by 20 blocks; it catches up to the head (it scans to the head).
      await stack.chain.mine(20);
      const caughtUp = await waitFor(
        async () => {
          const e = await scrape(stack.url);
          const lag = e.value("stablegate_watcher_lag_blocks", { chain });
          const gasRead = e.value("stablegate_relayer_gas_balance_wei", { chain }) !== undefined;
          return lag === 0 && gasRead && e;
        },
        15_000,
        "the watcher's lag down to nothing, and the relayer's gas read",
      );
      const ready = (await stack.readyz()).chains[0];
      expect(caughtUp.value("stablegate_relayer_gas_balance_wei", { chain })).toBe(
        Number(ready.relayer_gas.balance_wei),
      );
      expect(caughtUp.value("stablegate_settlement_queue_depth", { chain })).toBe(0);

      // A new balance shows once the gas loop reads it again (every minute of the injected clock).
      const balance = 3_005_000_000_000_000_000n;
      await stack.chain.setBalance(relayer, balance);
      stack.clock.advance(GAS_REFRESH_MS);
      await waitFor(
        async () =>
          (await scrape(stack.url)).value("stablegate_relayer_gas_balance_wei", { chain }) === Number(balance),
        15_000,
        "the new balance on /metrics",
      );
    } finally {
      await stack.stop();
    }
  });
  test("with funding from another chain: figures for each chain, and an open bridge in the bridging queue", async () => {
    const x = await startCrossChainStack({ attestationDelayMs: 0 });
    try {
      await x.stack.restart({ STABLEGATE_METRICS: "on", STABLEGATE_METRICS_TOKEN: TOKEN });
      const payment = await x.stack.createPayment({ amount: "2.00" });
      // Circle's service down: the bridge cannot burn, and stays open while the test looks.
      x.local.attestation.setMode("down");
      await payOnSource(x, payment.deposit_address, usdc("2.00"));
      const settlement = x.stack.config.chain.name;
      const source = LOCAL_SOURCE.name;
      const exposition = await waitFor(
        async () => {
          const e = await scrape(x.stack.url);
          return e.value("stablegate_bridging_queue_depth", { chain: source }) === 1 && e;
        },
        30_000,
        "the open bridge on /metrics",
      );
      expect((await bridgesOf(x, payment.id)).map((b) => b.state)).toEqual(["credited"]);
      // Paid in full, nothing swept while the bridge is open.
      expect(exposition.value("stablegate_settlement_queue_depth", { chain: settlement })).toBe(1);
      for (const chain of [settlement, source]) {
        expect(exposition.value("stablegate_watcher_lag_blocks", { chain })).toBeGreaterThanOrEqual(0);
        expect(exposition.value("stablegate_relayer_gas_balance_wei", { chain })).toBeGreaterThan(0);
      }
    } finally {
      x.local.attestation.setMode("normal");
      await x.stop();
    }
  }, 60_000);
});
