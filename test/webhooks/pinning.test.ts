/**
 * DNS pinning: the sender resolves the webhook host, checks the answer, and must then connect
 * to the address it checked. A connection that resolved the name again could land wherever DNS
 * points by then (rebinding), past the check.
 *
 * The host is `localhost`, which the system resolver (what an unpinned connection would ask)
 * answers with 127.0.0.1. The injected resolver answers 127.0.0.2 the first time and 127.0.0.1
 * after that, like a rebinding name server. One listener waits on each address, on the same
 * port: only the one on the first answer may see the request. STABLEGATE_WEBHOOK_ALLOW_PRIVATE
 * is on here so loopback addresses pass the check; pinning works the same either way.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server } from "bun";
import { sendWebhook } from "../../src/webhooks/sender.ts";

const CHECKED = "127.0.0.2";
const REBOUND = "127.0.0.1";

const hits: Array<{ at: string; host: string | null; body: string }> = [];
let checked: Server<undefined>;
let rebound: Server<undefined>;

function listen(hostname: string, port: number): Server<undefined> {
  return Bun.serve({
    hostname,
    port,
    async fetch(request) {
      hits.push({ at: hostname, host: request.headers.get("host"), body: await request.text() });
      return new Response("ok");
    },
  });
}

beforeAll(() => {
  // The second listener needs the first one's port on another address; another process may
  // hold that port on 127.0.0.1, so try a few.
  for (let attempt = 0; ; attempt++) {
    checked = listen(CHECKED, 0);
    try {
      rebound = listen(REBOUND, checked.port!);
      return;
    } catch (error) {
      checked.stop(true);
      if (attempt === 10) throw error;
    }
  }
});

afterAll(() => {
  checked?.stop(true);
  rebound?.stop(true);
});

test("the connection goes to the address that was checked, not to what the name resolves to later", async () => {
  const lookups: string[] = [];
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    return lookups.length === 1 ? [CHECKED] : [REBOUND];
  };

  const result = await sendWebhook(`http://localhost:${checked.port}/hook`, { "x-test": "pinning" }, '{"id":"evt_1"}', {
    resolve,
    allowPrivate: true,
    timeoutMs: 10_000,
  });

  expect(result).toMatchObject({ status: 200, error: null });
  expect(lookups).toEqual(["localhost"]);
  // The request reached the checked address and still named the host it was sent to.
  expect(hits).toEqual([{ at: CHECKED, host: `localhost:${checked.port}`, body: '{"id":"evt_1"}' }]);
});
