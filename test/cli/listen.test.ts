/**
 * `stablegate listen` as a subprocess against a real `stablegate serve` subprocess: it forwards
 * each event, signed, to a local receiver, survives the server being killed and restarted
 * without losing or repeating an event, and polls where the stream is unavailable.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { drainTail } from "../../src/lib/stream-tail.ts";
import { type ReceivedHook, type Receiver, startReceiver } from "../support/receiver.ts";
import { childEnv, MAIN, type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { api, makeTempDir, testEnv } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let dataDir: string;
let env: Record<string, string>;
let server: ServeProcess;
/** Where the server's own webhook deliveries go (the test pings need an endpoint). */
let sink: Receiver;
/** Where `listen` forwards to. */
let local: Receiver;
let proxy: ReturnType<typeof Bun.serve> | null = null;
const listeners: Bun.Subprocess[] = [];

async function startServe(): Promise<void> {
  server = spawnServe(env);
  await server.listening();
}

beforeAll(async () => {
  dataDir = makeTempDir("stablegate-listen-");
  // A fixed port, so a restarted server is where `listen` looks for it.
  env = { ...testEnv(dataDir), STABLEGATE_PORT: String(await freePort()), STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" };
  sink = startReceiver();
  local = startReceiver();
  await startServe();
});
afterEach(async () => {
  for (const proc of listeners.splice(0)) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
  proxy?.stop(true);
  proxy = null;
  local.hits.length = 0;
});
afterAll(async () => {
  await server?.stop();
  sink?.stop();
  local?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** An account with a webhook endpoint; `ping` writes one event (a test event) and returns its id. */
async function shop(name: string) {
  const out = runAccountCommand("account", ["create", "--name", name, "--payout-address", `0x${"1".repeat(40)}`], env);
  const key = (out as { api_key: string }).api_key;
  const call = api(server.url, key);
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: sink.url } });
  expect(endpoint.status).toBe(201);
  return {
    key,
    async ping(): Promise<string> {
      const sent = await api(server.url, key)(`/api/v1/webhook_endpoints/${endpoint.json.id}/test`, { method: "POST" });
      expect(sent.status).toBe(202);
      return sent.json.event_id;
    },
    payload: async (id: string) => (await api(server.url, key)(`/api/v1/events/${id}`)).text,
  };
}

/** `stablegate listen` against `url`, once it has printed its secret and connected (or started polling). */
async function listen(url: string, key: string, ready = /connected|polling/, forwardTo = local.url) {
  const proc = Bun.spawn([process.execPath, MAIN, "listen", "--url", url, "--key", key, "--forward-to", forwardTo], {
    env: childEnv({}),
    stdout: "pipe",
    stderr: "pipe",
  });
  listeners.push(proc);
  const stdout = drainTail(proc.stdout, 1 << 20);
  const stderr = drainTail(proc.stderr, 1 << 20);
  const secret = (await waitFor(async () => /secret: (whsec_\S+)/.exec(await stdout()), 20_000, "the secret"))[1]!;
  await waitFor(async () => ready.test(await stderr()), 20_000, "listen to connect");
  return { proc, secret, stdout, stderr };
}

/** Standard Webhooks, computed here from the spec: base64 HMAC-SHA256 of "id.timestamp.body". */
function verified(hook: ReceivedHook, secret: string): boolean {
  const id = hook.headers.get("webhook-id")!;
  const timestamp = hook.headers.get("webhook-timestamp")!;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${hook.body}`).digest("base64");
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
  return fresh && (hook.headers.get("webhook-signature") ?? "").split(" ").includes(`v1,${expected}`);
}

const arrived = (count: number) =>
  waitFor(() => local.hits.length >= count && local.hits, 30_000, `${count} forwarded events`);

describe("stablegate listen", () => {
  test("forwards each new event, signed with the secret it printed, and prints one line per event", async () => {
    const merchant = await shop("Listen Shop");
    const old = await merchant.ping(); // before listen started: not forwarded
    const { secret, stdout } = await listen(server.url, merchant.key);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const ids = [await merchant.ping(), await merchant.ping(), await merchant.ping()];

    const hits = await arrived(3);
    expect(hits.map((h) => h.id)).toEqual(ids);
    for (const hit of hits) {
      expect(verified(hit, secret)).toBe(true);
      expect(hit.body).toBe(await merchant.payload(hit.id));
    }
    // A wrong secret does not verify (the check can fail).
    expect(verified(hits[0]!, `whsec_${Buffer.alloc(32, 7).toString("base64")}`)).toBe(false);
    expect(hits.map((h) => h.id)).not.toContain(old);

    const lines = (await stdout()).split("\n").filter((line) => line.includes("evt_"));
    expect(lines).toHaveLength(3);
    for (const [i, line] of lines.entries()) expect(line).toMatch(new RegExp(`^\\S+Z  test  ${ids[i]}  \\[200\\]$`));
  });

  test("a local answer that is not 2xx is printed as it was", async () => {
    const merchant = await shop("Failing Shop");
    const { stdout } = await listen(server.url, merchant.key);
    local.answer = () => new Response("no", { status: 500 });
    const failed = await merchant.ping();
    await waitFor(async () => (await stdout()).includes(`${failed}  [500]`), 30_000, "the 500 line");
    local.answer = () => new Response("ok");
  });

  test("a local URL that does not answer is printed as an error, and listen goes on", async () => {
    const merchant = await shop("Closed Shop");
    const closed = `http://127.0.0.1:${await freePort()}/webhooks`;
    const { stdout } = await listen(server.url, merchant.key, /connected/, closed);
    const ids = [await merchant.ping(), await merchant.ping()];
    for (const id of ids)
      await waitFor(async () => new RegExp(`${id}  \\[error: .+\\]`).test(await stdout()), 30_000, "the error line");
  });

  test("survives the server being killed and restarted: every event arrives once", async () => {
    const merchant = await shop("Restart Shop");
    const { stderr } = await listen(server.url, merchant.key);
    const first = await merchant.ping();
    await arrived(1);

    await server.stop(); // kill -9
    await startServe();
    // Written while listen is still reconnecting: it must resume after `first`, not at "new events".
    const during = [await merchant.ping(), await merchant.ping()];
    await waitFor(async () => (await stderr()).split("connected").length > 2, 30_000, "listen to reconnect");
    const after = await merchant.ping();

    const hits = await arrived(4);
    expect(hits.map((h) => h.id)).toEqual([first, ...during, after]);
    // Nothing more comes: one more event is the next and last thing forwarded.
    const last = await merchant.ping();
    await arrived(5);
    expect(local.hits.map((h) => h.id)).toEqual([first, ...during, after, last]);
  });

  test("polls the events list where the stream answers 404 (an older server, a proxy), payloads exact", async () => {
    const merchant = await shop("Proxied Shop");
    proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const url = new URL(req.url);
        if (url.pathname === "/api/v1/events/stream") return Response.json({ error: "not found" }, { status: 404 });
        return fetch(server.url + url.pathname + url.search, { headers: req.headers });
      },
    });
    const { secret } = await listen(`http://127.0.0.1:${proxy.port}`, merchant.key, /polling/);
    const ids = [await merchant.ping(), await merchant.ping()];
    const hits = await arrived(2);
    expect(hits.map((h) => h.id)).toEqual(ids);
    for (const hit of hits) {
      expect(verified(hit, secret)).toBe(true);
      expect(hit.body).toBe(await merchant.payload(hit.id));
    }
    const third = await merchant.ping();
    await arrived(3);
    expect(local.hits.map((h) => h.id)).toEqual([...ids, third]);
  });

  test("events written before its stream connected, on an account that had none, still arrive", async () => {
    const merchant = await shop("Slow Start Shop");
    // The proxy holds listen's first stream request until the test lets it through.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 60,
      async fetch(req) {
        const url = new URL(req.url);
        if (url.pathname === "/api/v1/events/stream" && !held) {
          held = true;
          await released;
        }
        return fetch(server.url + url.pathname + url.search, { headers: req.headers });
      },
    });
    const started = listen(`http://127.0.0.1:${proxy.port}`, merchant.key);
    await waitFor(() => held, 20_000, "listen to ask for the stream");
    // Listen found no events at start; these come after that and before its stream begins.
    const early = [await merchant.ping(), await merchant.ping()];
    release();
    await started;
    const later = await merchant.ping();
    const hits = await arrived(3);
    expect(hits.map((h) => h.id)).toEqual([...early, later]);
  });

  test("SIGTERM stops it cleanly (exit 0)", async () => {
    const merchant = await shop("Stopping Shop");
    const { proc } = await listen(server.url, merchant.key);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("a refused key stops it with the server's error (exit 1); a usage mistake is exit 2", async () => {
    const run = async (args: string[]) => {
      const proc = Bun.spawn([process.execPath, MAIN, "listen", ...args], {
        env: childEnv({}),
        stdout: "pipe",
        stderr: "pipe",
      });
      listeners.push(proc);
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      return { code, stderr: stderr.trim().split("\n").at(-1) };
    };
    const bad = await run(["--url", server.url, "--key", `sk_live_${"A".repeat(32)}`, "--forward-to", local.url]);
    expect(bad).toEqual({ code: 1, stderr: "stablegate: the server answered 401 invalid API key" });
    expect(await run(["--key", "k", "--forward-to", local.url])).toEqual({
      code: 2,
      stderr: "stablegate: --url is required (see stablegate --help)",
    });
    expect(await run(["--url", "ftp://x", "--key", "k", "--forward-to", local.url])).toEqual({
      code: 2,
      stderr: "stablegate: --url must be an http:// or https:// URL (see stablegate --help)",
    });
    expect((await run(["--url", server.url, "--key", "k", "--forward-to", local.url, "--events", "nope"])).code).toBe(
      2,
    );
  });
});
