/**
 * DNS rebinding: a webhook host that resolved to a public address when it was registered but
 * resolves to a private one when a webhook is sent. The sender must check the answer again and
 * refuse before connecting. STABLEGATE_WEBHOOK_ALLOW_PRIVATE is off, as in production.
 *
 * The URLs carry the port of a local TCP listener, so a sender that skipped the check (or that
 * checked one answer and connected to another) would reach it: the listener counts every
 * connection, TLS or not, and must count none.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

const PUBLIC_IP = "93.184.216.34";
const SCHEDULE = [0, 200, 400] as const;
const TIMEOUT_MS = 500;

/** What each test host resolves to right now; tests change an answer between steps. */
const answers = new Map<string, string[]>();
const lookups: string[] = [];
const resolve = async (hostname: string) => {
  lookups.push(hostname);
  const answer = answers.get(hostname);
  if (answer === undefined) throw new Error(`ENOTFOUND ${hostname}`);
  return answer;
};

let server: TestServer;
let merchant: Api;
let listener: TCPSocketListener<undefined>;
let connections = 0;

beforeAll(async () => {
  listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open() {
        connections++;
      },
      data(socket) {
        socket.end();
      },
    },
  });
  server = await startTestServer(
    { webhookAllowPrivate: false },
    { resolve, webhookTimeoutMs: TIMEOUT_MS, webhookSchedule: SCHEDULE },
  );
  merchant = api(server.url, (await server.createAccount("Rebind")).apiKey);
});

afterAll(async () => {
  await server?.stop();
  listener?.stop(true);
});

/** Registers `host` while it resolves publicly, rebinds it to `later`, sends a test event, waits for the outcome. */
async function rebindAndSend(host: string, later: string[]) {
  answers.set(host, [PUBLIC_IP]);
  const created = await merchant("/api/v1/webhook_endpoints", {
    body: { url: `https://${host}:${listener.port}/hook` },
  });
  expect(created.status).toBe(201);
  expect(created.json.status).toBe("enabled");
  answers.set(host, later);

  const lookupsBefore = lookups.filter((h) => h === host).length;
  const sent = await merchant(`/api/v1/webhook_endpoints/${created.json.id}/test`, { method: "POST" });
  expect(sent.status).toBe(202);
  const delivery = await waitFor(
    async () => {
      const list = await merchant(`/api/v1/webhook_endpoints/${created.json.id}/deliveries`);
      const d = list.json.data.find((x: { id: string }) => x.id === sent.json.delivery.id);
      return d && d.status !== "pending" ? d : undefined;
    },
    5_000,
    `the delivery to ${host} to give up`,
  );
  // Asked again for every attempt: the registration-time answer is never reused.
  expect(lookups.filter((h) => h === host).length - lookupsBefore).toBe(SCHEDULE.length);
  return delivery;
}

describe("an address that changes between registration and sending", () => {
  test("the listener is reachable on its port, so a connection would be seen", async () => {
    await fetch(`https://127.0.0.1:${listener.port}/`).catch(() => undefined);
    await waitFor(() => connections === 1, 5_000, "the control connection");
    connections = 0;
  });

  test("127.0.0.1 at send time: registered (201), then every attempt refused before connecting", async () => {
    const d = await rebindAndSend("hooks.example.com", ["127.0.0.1"]);
    expect(d).toMatchObject({ status: "failed", attempt_count: SCHEDULE.length });
    for (const a of d.attempts) {
      expect(a.response_status).toBeNull();
      expect(a.error).toMatch(/non-public address/);
      expect(a.error).toContain("127.0.0.1");
      expect(a.error).toMatch(/^refused before sending/);
    }
    expect(connections).toBe(0);
  });

  test("a public and a loopback answer together are refused too (every address is checked)", async () => {
    const d = await rebindAndSend("mixed-rebind.example.com", [PUBLIC_IP, "127.0.0.1"]);
    expect(d.status).toBe("failed");
    for (const a of d.attempts) expect(a.error).toMatch(/non-public address 127\.0\.0\.1/);
    expect(connections).toBe(0);
  });

  test.each([["::1"], ["::ffff:127.0.0.1"], ["169.254.169.254"], ["10.0.0.1"], ["0.0.0.0"]])(
    "%s at send time is refused",
    async (address) => {
      const host = `rebind-${address.replace(/[^0-9a-f]/gi, "-")}.example.com`;
      const d = await rebindAndSend(host, [address]);
      expect(d.status).toBe("failed");
      for (const a of d.attempts) {
        expect(a.response_status).toBeNull();
        expect(a.error).toMatch(/non-public address/);
      }
      expect(connections).toBe(0);
    },
  );

  test("a host that stops resolving is a failed attempt, not a crash", async () => {
    const d = await rebindAndSend("vanishing.example.com", []);
    expect(d.status).toBe("failed");
    for (const a of d.attempts) expect(a.error).toMatch(/could not be resolved/);
    expect(connections).toBe(0);
  });
});
