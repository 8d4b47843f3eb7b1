/**
 * The sign-in throttle behind a reverse proxy, as deploy/compose.yaml runs it: the real server
 * over real HTTP with a real proxy process in front (test/support/forwarding-proxy.ts), clients
 * connecting from loopback addresses of their own. With the proxy in STABLEGATE_TRUSTED_PROXIES,
 * a stranger's failed sign-ins slow that stranger alone; X-Forwarded-For is believed only from
 * the proxy, and only the hop it added. Without the setting every client is the proxy, and even
 * then a right password is never refused for what other clients did.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SIGN_IN_FREE_FAILURES, SIGN_IN_REFUSED } from "../../src/users/service.ts";
import { createDashboardUser, type DashboardUser, postSignIn } from "../support/dashboard.ts";
import {
  fetchFrom,
  PROXY_ADDRESS,
  type ProxiedServer,
  startBehindProxy,
  stopBehindProxy,
} from "../support/forwarding-proxy.ts";

type Rig = ProxiedServer<{ merchant: DashboardUser }>;

/** The server behind the proxy, and a dashboard user. */
const startRig = (env: Record<string, string>): Promise<Rig> =>
  startBehindProxy(env, async (server) => ({
    merchant: await createDashboardUser(server.env, (await server.createAccount("Proxy Shop")).accountId),
  }));
const stopRig = stopBehindProxy;

let guesses = 0;

/** A sign-in sent from `client`, to `url` (the proxy's or the server's), with extra headers if given. */
function signInFrom(
  client: string,
  url: string,
  form: { email: string; password: string },
  headers: Record<string, string> = {},
) {
  return postSignIn(url, form, undefined, (to, init = {}) => {
    const merged = new Headers(init.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetchFrom(client, to, { ...init, headers: merged });
  });
}

/** A wrong guess at someone else's account (each one a new email, as a stranger spraying would). */
const strangerGuess = (client: string, url: string, headers?: Record<string, string>) =>
  signInFrom(client, url, { email: `victim${++guesses}@elsewhere.example`, password: "password123456" }, headers);

const noticeOf = (page: string) => /<p class="notice bad" role="alert">([^<]*)<\/p>/.exec(page)?.[1];

describe("behind a proxy listed in STABLEGATE_TRUSTED_PROXIES", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ STABLEGATE_TRUSTED_PROXIES: `${PROXY_ADDRESS}/32, 10.0.0.0/8` });
  });
  afterAll(() => stopRig(rig));

  test("a stranger's failed sign-ins slow that stranger; another client and the right password still get in", async () => {
    const stranger = "127.0.0.10";
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_FREE_FAILURES + 3; i++) {
      const res = await strangerGuess(stranger, rig.proxy.url);
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(noticeOf(await res.text())).toStartWith(
          `${SIGN_IN_REFUSED} Many sign-ins from your network have failed`,
        );
      }
    }
    expect(statuses).toEqual([...Array(SIGN_IN_FREE_FAILURES).fill(401), 429, 429, 429]);

    // Another client behind the same proxy: its own mistakes are its own, its password works.
    const other = "127.0.0.11";
    expect((await signInFrom(other, rig.proxy.url, { ...rig.merchant, password: "not the password" })).status).toBe(
      401,
    );
    expect((await signInFrom(other, rig.proxy.url, rig.merchant)).status).toBe(303);
    // The merchant at the stranger's very address (one office, one NAT): the right password still signs in.
    const res = await signInFrom(stranger, rig.proxy.url, rig.merchant);
    expect(res.status).toBe(303);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("stablegate_session="))).toBe(true);
  });

  test("X-Forwarded-For a client sends through the proxy is not believed: the hop the proxy added is", async () => {
    const client = "127.0.0.12";
    const statuses: number[] = [];
    // A new forged address each time: were it believed, every guess would be a new client's first.
    for (let i = 0; i < SIGN_IN_FREE_FAILURES + 1; i++) {
      statuses.push((await strangerGuess(client, rig.proxy.url, { "x-forwarded-for": `198.51.100.${i + 1}` })).status);
    }
    expect(statuses).toEqual([...Array(SIGN_IN_FREE_FAILURES).fill(401), 429]);
  });

  test("a peer that is not a trusted proxy: its X-Forwarded-For is ignored", async () => {
    const direct = "127.0.0.13";
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_FREE_FAILURES + 1; i++) {
      statuses.push((await strangerGuess(direct, rig.server.url, { "x-forwarded-for": `203.0.113.${i + 1}` })).status);
    }
    expect(statuses).toEqual([...Array(SIGN_IN_FREE_FAILURES).fill(401), 429]);
  });
});

describe("behind the same proxy without STABLEGATE_TRUSTED_PROXIES", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({});
  });
  afterAll(() => stopRig(rig));

  test("every client is the proxy, yet the right password is never refused for a stranger's failures", async () => {
    for (let i = 0; i < SIGN_IN_FREE_FAILURES; i++)
      expect((await strangerGuess("127.0.0.10", rig.proxy.url)).status).toBe(401);
    // One client to the server: another machine's wrong password is slowed with the stranger's...
    const wrong = await signInFrom("127.0.0.11", rig.proxy.url, { ...rig.merchant, password: "not the password" });
    expect(wrong.status).toBe(429);
    // ...but its right one signs in.
    expect((await signInFrom("127.0.0.11", rig.proxy.url, rig.merchant)).status).toBe(303);
  });
});
