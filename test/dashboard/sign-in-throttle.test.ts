/**
 * The sign-in throttle over real HTTP, with the server's clock injected: the 429 page, its
 * Retry-After and the wait it names, and the same answer for an unknown email as for a wrong
 * password. Every request here comes from 127.0.0.1, so each test first moves the clock past the
 * previous one's failures. Behind a proxy: sign-in-proxy.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { SIGN_IN_WINDOW_MS } from "../../src/users/service.ts";
import { createDashboardUser, type DashboardUser, postSignIn } from "../support/dashboard.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Stopped, so the seconds in Retry-After are exact; tests move it by hand.
const clock = { at: Date.now(), now: () => clock.at, advance: (ms: number) => void (clock.at += ms) };
let server: TestServer;
let user: DashboardUser;

beforeAll(async () => {
  server = await startTestServer({}, { clock });
  user = await createDashboardUser(server.env, (await server.createAccount("Throttle Shop")).accountId);
});
afterAll(() => server.stop());
beforeEach(() => clock.advance(SIGN_IN_WINDOW_MS));

const wrong = (email: string) => postSignIn(server.url, { email, password: "not the password" });
const noticeOf = (page: string) => /<p class="notice bad" role="alert">([^<]*)<\/p>/.exec(page)?.[1];

describe("sign-in throttle over HTTP", () => {
  test("past 5 failures for an email, a 429 page with Retry-After, even with the right password, for a wait that doubles", async () => {
    for (let i = 0; i < 5; i++) expect((await wrong(user.email)).status).toBe(401);
    const res = await postSignIn(server.url, user);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.getSetCookie().some((c) => c.startsWith("stablegate_session="))).toBe(false);
    const page = await res.text();
    expect(noticeOf(page)).toBe("Too many failed sign-ins for this email. Try again in 1 second.");
    expect(page).toContain('<button class="btn" type="submit">Sign in</button>');

    // Each further failure doubles the wait: 2 s, 4 s, ... the page says it in minutes once it is long.
    for (let wait = 1; wait < 256; wait *= 2) {
      clock.advance(wait * 1000);
      expect((await wrong(user.email)).status).toBe(401);
    }
    const long = await postSignIn(server.url, user);
    expect(long.headers.get("retry-after")).toBe("256");
    expect(noticeOf(await long.text())).toBe("Too many failed sign-ins for this email. Try again in 5 minutes.");
    clock.advance(256_000);
    expect((await postSignIn(server.url, user)).status).toBe(303);
  });

  test("an unknown email is answered exactly as a wrong password, refused and then throttled", async () => {
    const known: Array<[number, string | undefined]> = [];
    for (let i = 0; i < 5; i++) {
      const res = await wrong(user.email);
      known.push([res.status, noticeOf(await res.text())]);
    }
    clock.advance(SIGN_IN_WINDOW_MS);
    const unknown: Array<[number, string | undefined]> = [];
    for (let i = 0; i < 5; i++) {
      const res = await wrong("nobody@shop.example");
      unknown.push([res.status, noticeOf(await res.text())]);
    }
    expect(unknown).toEqual(known);
    expect(known[0]).toEqual([401, "That email and password do not match a dashboard user."]);
    const throttled = await wrong("nobody@shop.example");
    expect([throttled.status, throttled.headers.get("retry-after")]).toEqual([429, "1"]);
  });

  test("5 failures from one client, whatever emails it tries: its wrong passwords wait, its right one signs in", async () => {
    for (let i = 0; i < 5; i++) expect((await wrong(`guess${i}@shop.example`)).status).toBe(401);
    const slowed = await wrong("guess5@shop.example");
    expect([slowed.status, slowed.headers.get("retry-after")]).toEqual([429, "2"]);
    expect(noticeOf(await slowed.text())).toBe(
      "That email and password do not match a dashboard user. Many sign-ins from your network have failed: wait 2 seconds before trying again.",
    );
    expect((await postSignIn(server.url, user)).status).toBe(303);
  });
});
