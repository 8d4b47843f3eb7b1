/**
 * Receivers that answer badly: a redirect, an endless body, bytes that are not HTTP, a hang-up,
 * nothing listening. Each is a recorded attempt, retried on schedule, and the server stays fine.
 * Setup: test/support/webhook-delivery.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { waitFor } from "../support/wait.ts";
import {
  delivery,
  deliveryRig,
  register,
  SCHEDULE,
  sendTest,
  settled,
  status,
  TIMEOUT_MS,
} from "../support/webhook-delivery.ts";

const rig = deliveryRig();
const { merchant, newHook } = rig;

/** A TCP listener that answers every request with `reply` (null: says nothing) and hangs up. */
function rawListener(reply: string | null) {
  const state = { requests: 0, listener: null as TCPSocketListener<undefined> | null };
  state.listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket: Socket<undefined>) {
        state.requests++;
        if (reply !== null) socket.write(reply);
        socket.end();
      },
    },
  });
  return state;
}
let garbage: ReturnType<typeof rawListener>;
let hangup: ReturnType<typeof rawListener>;
let redirectTarget: ReturnType<typeof Bun.serve>;
const redirectTargetHits: string[] = [];

beforeAll(() => {
  redirectTarget = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      redirectTargetHits.push(await req.text());
      return new Response("ok");
    },
  });
  garbage = rawListener("SSH-2.0-OpenSSH_9.6 \u0000\u0001\u0002 this is not HTTP\r\n\r\n");
  hangup = rawListener(null);
});

afterAll(() => {
  redirectTarget?.stop(true);
  garbage?.listener?.stop(true);
  hangup?.listener?.stop(true);
});

describe("redirects", () => {
  test("a 302 is not followed: the target receives nothing and the attempt says redirect", async () => {
    const m = await merchant("Redirect");
    const target = `http://127.0.0.1:${redirectTarget.port}/landing`;
    const hook = newHook(status(302, { location: target }));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d.status).toBe("failed");
    expect(hook.hits).toHaveLength(SCHEDULE.length);
    for (const a of d.attempts) {
      expect(a.response_status).toBe(302);
      expect(a.error).toMatch(/redirect/i);
    }
    expect(redirectTargetHits).toHaveLength(0);
  });
});

describe("receivers that misbehave", () => {
  test("a huge response body is cut off: the delivery succeeds quickly and the server is fine", async () => {
    const m = await merchant("Chatty");
    const chunk = new Uint8Array(64 * 1024).fill(120);
    let written = 0;
    const hook = newHook(
      () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              if (written >= 256 * 1024 * 1024) return controller.close();
              written += chunk.length;
              controller.enqueue(chunk);
            },
          }),
          { headers: { "content-type": "text/plain" } },
        ),
    );
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId, 3_000);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
    expect(d.attempts[0]).toMatchObject({ response_status: 200, error: null });
    expect(d.attempts[0].duration_ms).toBeLessThan(TIMEOUT_MS);
    expect(written).toBeLessThan(256 * 1024 * 1024); // the sender hung up long before the end
    expect((await fetch(`${rig.server.url}/healthz`)).status).toBe(200);

    const after = await sendTest(m, endpoint);
    expect((await settled(m, endpoint, after.deliveryId, 3_000)).status).toBe("succeeded");
  });

  test("an answer that is not HTTP is a failed attempt, retried on schedule", async () => {
    const m = await merchant("Garbage");
    const endpoint = await register(m, `http://127.0.0.1:${garbage.listener!.port}/hook`);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "failed", attempt_count: SCHEDULE.length });
    for (const a of d.attempts) {
      expect(a.response_status).toBeNull();
      expect(typeof a.error).toBe("string");
      expect(a.error.length).toBeGreaterThan(0);
    }
    expect(garbage.requests).toBe(SCHEDULE.length);
  });

  test("a connection closed without an answer is a failed attempt, retried on schedule", async () => {
    const m = await merchant("Hangup");
    const endpoint = await register(m, `http://127.0.0.1:${hangup.listener!.port}/hook`);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "failed", attempt_count: SCHEDULE.length });
    for (const a of d.attempts) {
      expect(a.response_status).toBeNull();
      expect(a.error).toBeTruthy();
      expect(a.duration_ms).toBeLessThan(TIMEOUT_MS);
    }
    expect(hangup.requests).toBe(SCHEDULE.length);
  });

  test("nothing listening on the port is a failed attempt with the connection error", async () => {
    const m = await merchant("Closed");
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x") });
    const port = closed.port;
    closed.stop(true);
    const endpoint = await register(m, `http://127.0.0.1:${port}/hook`);
    const sent = await sendTest(m, endpoint);
    const d = await waitFor(
      async () => {
        const found = await delivery(m, endpoint, sent.deliveryId);
        return found?.attempt_count >= 1 ? found : undefined;
      },
      5_000,
      "the first attempt",
    );
    expect(d.attempts.at(-1).response_status).toBeNull();
    expect(d.attempts.at(-1).error).toMatch(/ECONNREFUSED|refused/i);
    await m.api(`/api/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
  });
});
