/**
 * `stablegate listen` as a subprocess against a real `stablegate serve` subprocess: it forwards
 * each event, signed, to a local receiver, survives the server being killed and restarted
 * without losing or repeating an event, and polls where the stream is unavailable.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { UsageError } from "../../src/cli/args.ts";
import { eventSubject, parseListenArgs } from "../../src/cli/listen.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { drainTail } from "../../src/lib/stream-tail.ts";
import { runCli } from "../support/cli.ts";
import { type ReceivedHook, type Receiver, startReceiver } from "../support/receiver.ts";
import { markReceived } from "../support/refund-rows.ts";
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
  const out = await runAccountCommand(
    "account",
    ["create", "--name", name, "--payout-address", `0x${"1".repeat(40)}`],
    env,
  );
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

/**
 * `stablegate listen` against `url`, once it has printed its secret and connected (or started
 * polling). The key goes in STABLEGATE_API_KEY, or with `stdin` as the text piped to it.
 */
async function listen(
  url: string,
  key: string,
  ready = /connected|polling/,
  forwardTo = local.url,
  stdin?: { text: string; flag: boolean },
) {
  const args = ["listen", "--url", url, "--forward-to", forwardTo, ...(stdin?.flag ? ["--key-stdin"] : [])];
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: childEnv(stdin ? {} : { STABLEGATE_API_KEY: key }),
    stdin: stdin ? new TextEncoder().encode(stdin.text) : "ignore",
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

  test("a refund event's line names the refund, its payment, amount and status; each is forwarded signed", async () => {
    const merchant = await shop("Refund Shop");
    const call = api(server.url, merchant.key);
    const payment = (await call("/api/v1/payments", { body: { amount: "25.00" } })).json.id as string;
    await markReceived(env, payment, 25_000_000n);
    const { secret, stdout } = await listen(server.url, merchant.key);
    const created = await call(`/api/v1/payments/${payment}/refunds`, {
      body: { amount: "12.500001", refund_address: "0x8ba1f109551bD432803012645Ac136ddd64DBA72" },
    });
    expect(created.status).toBe(201);
    const refund = created.json.id as string;
    expect((await call(`/api/v1/refunds/${refund}/cancel`, { method: "POST" })).status).toBe(200);

    const hits = await arrived(3);
    expect(hits.map((h) => JSON.parse(h.body).type)).toEqual(["refund.created", "refund.payable", "refund.canceled"]);
    for (const hit of hits) expect(verified(hit, secret)).toBe(true);
    const lines = await waitFor(
      async () => {
        const found = (await stdout()).split("\n").filter((line) => line.includes(refund));
        return found.length === 3 && found;
      },
      30_000,
      "three refund lines",
    );
    const line = (type: string, status: string, i: number) =>
      new RegExp(
        `^\\S+Z  ${type.replace(".", "\\.")}  ${hits[i]!.id}  ${refund}  payment ${payment}  12\\.500001 USDC  ${status}  \\[200\\]$`,
      );
    expect(lines[0]).toMatch(line("refund.created", "awaiting_payment", 0));
    expect(lines[1]).toMatch(line("refund.payable", "awaiting_payment", 1));
    expect(lines[2]).toMatch(line("refund.canceled", "canceled", 2));
  });

  test("a payment event's line names the payment, its amount and status; other events and unreadable payloads none", async () => {
    const merchant = await shop("Subject Shop");
    const payment = (await api(server.url, merchant.key)("/api/v1/payments", { body: { amount: "3.00" } })).json;
    const event = { id: "evt_1", object: "event", type: "payment.pending", data: { payment } };
    expect(eventSubject(JSON.stringify(event))).toBe(`payment ${payment.id}  3.00 USDC  pending`);
    const ping = await merchant.payload(await merchant.ping());
    expect(eventSubject(ping)).toBeNull();
    expect(eventSubject("{not json")).toBeNull();
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
    const bad = await run(["--url", server.url, "--forward-to", local.url], {
      STABLEGATE_API_KEY: `sk_live_${"A".repeat(32)}`,
    });
    expect(bad).toEqual({ code: 1, stderr: "stablegate: the server answered 401 invalid API key" });
    expect(await run(["--forward-to", local.url], { STABLEGATE_API_KEY: KEY })).toEqual({
      code: 2,
      stderr: "stablegate: --url is required (see stablegate --help)",
    });
    expect(await run(["--url", "ftp://x", "--forward-to", local.url], { STABLEGATE_API_KEY: KEY })).toEqual({
      code: 2,
      stderr: "stablegate: --url must be an http:// or https:// URL (see stablegate --help)",
    });
    const events = ["--url", server.url, "--forward-to", local.url, "--events", "nope"];
    expect((await run(events, { STABLEGATE_API_KEY: KEY })).code).toBe(2);
  });
});

/** A `stablegate listen` that is expected to stop on its own: its exit code and last stderr line. */
async function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const proc = Bun.spawn([process.execPath, MAIN, "listen", ...args], {
    env: childEnv(env),
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  listeners.push(proc);
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  return { code, stderr: stderr.trim().split("\n").at(-1) };
}

/** Well-formed, and no account's: where the key is read from is all these tests look at. */
const KEY = `sk_live_${"K".repeat(32)}`;

describe("the API key stays off the command line", () => {
  test("stablegate --help says where the key comes from, and offers no --key", async () => {
    const help = await runCli(["--help"], {});
    expect(help.code).toBe(0);
    const usage = help.stdout.slice(help.stdout.indexOf("stablegate listen"));
    expect(usage).toStartWith("stablegate listen --url URL --forward-to LOCAL_URL [--events TYPE,TYPE] [--key-stdin]");
    expect(usage).toContain("STABLEGATE_API_KEY");
    expect(help.stdout).not.toMatch(/--key sk_live|--key </);
  });

  test("--key is refused (exit 2) with how to pass the key now, and the value is never repeated", async () => {
    for (const args of [
      ["--url", server.url, "--key", KEY, "--forward-to", local.url],
      ["--url", server.url, `--key=${KEY}`, "--forward-to", local.url],
    ]) {
      const refused = await run(args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toStartWith("stablegate: --key is no longer accepted");
      expect(refused.stderr).toContain("STABLEGATE_API_KEY");
      expect(refused.stderr).toContain("--key-stdin");
      expect(refused.stderr).not.toContain(KEY);
    }
  });

  test("from STABLEGATE_API_KEY, nothing on the command line names it", async () => {
    const merchant = await shop("Env Key Shop");
    const { proc } = await listen(server.url, merchant.key);
    const cmdline = await Bun.file(`/proc/${proc.pid}/cmdline`).text();
    expect(cmdline).not.toContain(merchant.key);
    const id = await merchant.ping();
    expect((await arrived(1)).map((h) => h.id)).toEqual([id]);
  });

  test("from standard input with --key-stdin, even where STABLEGATE_API_KEY is set", async () => {
    const merchant = await shop("Stdin Key Shop");
    await listen(server.url, merchant.key, /connected/, local.url, { text: `${merchant.key}\n`, flag: true });
    const id = await merchant.ping();
    expect((await arrived(1)).map((h) => h.id)).toEqual([id]);
    // The flag wins over the environment: a wrong key there is not the one used.
    const refused = await run(
      ["--url", server.url, "--forward-to", local.url, "--key-stdin"],
      {
        STABLEGATE_API_KEY: KEY,
      },
      `sk_live_${"A".repeat(32)}\n`,
    );
    expect(refused).toEqual({ code: 1, stderr: "stablegate: the server answered 401 invalid API key" });
  });

  test("from standard input when it is piped and STABLEGATE_API_KEY is not set", async () => {
    const merchant = await shop("Piped Key Shop");
    await listen(server.url, merchant.key, /connected/, local.url, { text: merchant.key, flag: false });
    const id = await merchant.ping();
    expect((await arrived(1)).map((h) => h.id)).toEqual([id]);
  });

  test("no key, an empty one or a malformed one is a usage mistake saying where it looked", async () => {
    const args = ["--url", server.url, "--forward-to", local.url];
    const none = await run(args);
    expect(none.code).toBe(2);
    expect(none.stderr).toStartWith("stablegate: no API key on standard input; set STABLEGATE_API_KEY");
    expect(await run([...args, "--key-stdin"], {}, "\n")).toEqual({
      code: 2,
      stderr: expect.stringContaining("no API key on standard input"),
    });
    expect(await run(args, { STABLEGATE_API_KEY: "sk_live_short" })).toEqual({
      code: 2,
      stderr:
        "stablegate: STABLEGATE_API_KEY is not an API key (sk_live_ and 32 letters or digits) (see stablegate --help)",
    });
  });
});

describe("the server's address", () => {
  const sources = { env: { STABLEGATE_API_KEY: KEY }, stdinIsTty: true, readStdin: async () => "" };
  const parse = (url: string) =>
    parseListenArgs(["--url", url, "--forward-to", "http://localhost:3000/hooks"], sources);

  test("plain http:// to another machine is refused (exit 2), https:// is not", async () => {
    const refused = await run(["--url", "http://pay.example.com", "--forward-to", local.url], {
      STABLEGATE_API_KEY: KEY,
    });
    expect(refused).toEqual({
      code: 2,
      stderr:
        "stablegate: --url: http:// would send the API key and customer data unencrypted; use https://, " +
        "or http:// only to this machine (localhost, 127.0.0.1, [::1]) (see stablegate --help)",
    });
    for (const url of [
      "http://10.0.0.5:8080",
      "http://192.168.1.2",
      "http://[fd00::1]",
      "http://localhost.example.com",
      "http://128.0.0.1",
    ])
      await expect(parse(url)).rejects.toThrow(UsageError);
    expect((await parse("https://pay.example.com")).url).toBe("https://pay.example.com/");
  });

  test("http:// to this machine is accepted: localhost, 127.0.0.0/8 and ::1", async () => {
    for (const url of [
      "http://localhost:8080",
      "http://127.0.0.1:8080",
      "http://127.8.9.10",
      "http://[::1]:8080",
      "http://LOCALHOST",
    ])
      expect((await parse(url)).key).toBe(KEY);
  });
});
