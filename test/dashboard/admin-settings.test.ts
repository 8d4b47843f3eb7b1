/**
 * The dashboard's settings page over real HTTP with a signed-in client: the account, its payout
 * address (read-only, with the CLI command that changes it), its fee and what it means, its speed
 * policy and the form that changes it (saved for the account's new payments, a bad value refused
 * with nothing changed), the chain, and the relayer's gas balance, which is "unavailable" (never a 500, never a hang) when
 * the RPC refuses connections or accepts them and never answers. The balance from a live chain
 * is checked in browser-admin.test.ts, which runs on anvil.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { loadConfig } from "../../src/config.ts";
import { sql } from "../../src/db/engine.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { api, startTestServer, TEST_PAYOUT, type TestServer, testEnv } from "../support/server.ts";

const FEE_RECIPIENT = "0x2222222222222222222222222222222222222222";

/** Its RPC (127.0.0.1:1) refuses connections; the server's default fee is 1%, its default speed final. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ feeBps: 100, feeRecipient: FEE_RECIPIENT, defaultSpeed: "final" });
});
afterAll(() => server?.stop());

async function settingsOf(target: TestServer, accountId: string): Promise<{ status: number; page: string }> {
  const client = await signIn(target.url, await createDashboardUser(target.env, accountId));
  const res = await client.get("/dashboard/settings");
  return { status: res.status, page: await res.text() };
}

describe("the settings page", () => {
  test("shows the account, its payout address read-only with the command that changes it, and the fee", async () => {
    const account = await server.createAccount("Settled Shop");
    const { status, page } = await settingsOf(server, account.accountId);
    expect(status).toBe(200);
    expect(page).toContain('<dd id="account-name">Settled Shop</dd>');
    expect(page).toContain(`<code class="mono" id="payout-address">${TEST_PAYOUT}</code>`);
    expect(page).toContain(`stablegate account set-payout ${account.accountId} ADDRESS`);
    // Shown, never changed here: no form on the page but sign-out, the business details and logo
    // (test/documents/business-settings.test.ts) and the speed form, no payout field.
    expect(page.match(/<form [^>]*action="([^"]+)"/g)?.map((form) => /action="([^"]+)"/.exec(form)![1])).toEqual([
      "/dashboard/logout",
      "/dashboard/settings/business",
      "/dashboard/settings/logo",
      "/dashboard/settings/speed",
    ]);
    expect(page).not.toMatch(/<input[^>]+name="payout/);
    expect(page).toContain('<span id="fee">100 bps</span>');
    expect(page).toContain("the server&#39;s default");
    expect(page).toContain("1% of every amount received goes to the platform");
    expect(page).toContain('<dd id="chain-name">custom <span class="muted">(chain id 31337)</span></dd>');
  });

  test("an account's own fee is shown as its own", async () => {
    const created = (await runAccountCommand(
      "account",
      ["create", "--name", "Fee Shop", "--payout-address", TEST_PAYOUT, "--fee-bps", "250"],
      { ...server.env, STABLEGATE_FEE_RECIPIENT: FEE_RECIPIENT },
    )) as { account: { id: string } };
    const { page } = await settingsOf(server, created.account.id);
    expect(page).toContain('<span id="fee">250 bps</span>');
    expect(page).toContain("this account&#39;s own");
    expect(page).toContain("2.5% of every amount received");
  });

  test("with the RPC refusing connections the relayer's balance is unavailable, and the page still loads", async () => {
    const { status, page } = await settingsOf(server, (await server.createAccount("Offline Shop")).accountId);
    expect(status).toBe(200);
    expect(page).toContain('<span class="badge failed" id="relayer-balance">Unavailable</span>');
    expect(page).toMatch(/<dt>Relayer<\/dt><dd class="mono">0x[0-9a-fA-F]{40}<\/dd>/);
  });

  test("with an RPC that accepts connections and never answers, the page answers anyway, balance unavailable", async () => {
    // A node that has hung: it takes the connection and says nothing.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const env = { ...testEnv(server.dataDir), STABLEGATE_RPC_URL: `http://127.0.0.1:${silent.port}` };
    let hung: TestServer | undefined;
    try {
      hung = await startTestServer({ chain: loadConfig(env).chain });
      const { status, page } = await settingsOf(hung, (await hung.createAccount("Hung Shop")).accountId);
      expect(status).toBe(200);
      expect(page).toContain('id="relayer-balance">Unavailable</span>');
    } finally {
      // Closing the silent node's connections first lets the server's loops give up at once.
      silent.stop(true);
      await hung?.stop();
    }
  });
});

describe("the speed policy on the settings page", () => {
  /** A fresh account and a signed-in client of it. */
  async function signedIn(name: string): Promise<{ accountId: string; apiKey: string; client: DashboardClient }> {
    const account = await server.createAccount(name);
    return { ...account, client: await signIn(server.url, await createDashboardUser(server.env, account.accountId)) };
  }

  const speedOf = async (accountId: string) =>
    (await server.running.db.get<{ speed: string | null }>(sql`SELECT speed FROM accounts WHERE id = ${accountId}`))!
      .speed;

  /** The value of the radio button that is checked; the page has exactly one. */
  const checked = (page: string) => {
    const values = [...page.matchAll(/<input type="radio" name="speed" value="([a-z]+)" checked>/g)].map((m) => m[1]);
    expect(values).toHaveLength(1);
    return values[0];
  };

  test("an account that sets none shows the server's default as such, and that choice checked", async () => {
    const { client } = await signedIn("Default Speed Shop");
    const page = await (await client.get("/dashboard/settings")).text();
    expect(page).toContain('<span id="speed">final</span>');
    expect(page).toContain("(the server&#39;s default)");
    expect(checked(page)).toBe("default");
    expect(page).toContain("Follow the server&#39;s default (final)");
    // Each policy is offered with what it risks, and the form carries the session's CSRF token.
    for (const speed of ["fast", "standard", "final"]) expect(page).toContain(`name="speed" value="${speed}"`);
    expect(page).toContain("A reorganisation of the chain could still take it back");
    expect(page).toMatch(
      /<form class="speed-form" method="post" action="\/dashboard\/settings\/speed">\s*<input type="hidden" name="csrf"/,
    );
  });

  test("saving a speed: 303 to a notice, the page shows it as the account's own, and new payments take it", async () => {
    const { accountId, apiKey, client } = await signedIn("Fast Shop");
    const merchant = api(server.url, apiKey);
    const before = await merchant("/api/v1/payments", { body: { amount: "2.00" } });
    expect(before.json.speed).toBe("final");

    const saved = await client.post("/dashboard/settings/speed", { speed: "fast" });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/dashboard/settings?saved=speed");
    const page = await (await client.get("/dashboard/settings?saved=speed")).text();
    expect(page).toContain("Speed saved: payments created from now on run under fast.");
    expect(page).toContain('<span id="speed">fast</span>');
    expect(page).toContain("(this account&#39;s own)");
    expect(checked(page)).toBe("fast");
    expect(await speedOf(accountId)).toBe("fast");
    // The CLI sees the same account.
    expect(await runAccountCommand("account", ["show", accountId], server.env)).toMatchObject({
      speed: "fast",
      speed_source: "account",
    });

    // New payments take it, through the API and the dashboard's form; the one before keeps its own.
    expect((await merchant("/api/v1/payments", { body: { amount: "2.00" } })).json.speed).toBe("fast");
    const formed = await client.post("/dashboard/payments/new", { amount: "3.00", nonce: "speedNonce00000000000001" });
    expect(formed.status).toBe(303);
    const formedId = /\/dashboard\/payments\/(0x[0-9a-f]{64})/.exec(formed.headers.get("location") ?? "")![1]!;
    expect((await merchant(`/api/v1/payments/${formedId}`)).json.speed).toBe("fast");
    expect((await merchant(`/api/v1/payments/${before.json.id}`)).json.speed).toBe("final");

    // And back to the server's default.
    expect((await client.post("/dashboard/settings/speed", { speed: "default" })).status).toBe(303);
    const again = await (await client.get("/dashboard/settings?saved=speed")).text();
    expect(again).toContain("run under the server&#39;s default, final.");
    expect(checked(again)).toBe("default");
    expect(await speedOf(accountId)).toBeNull();
    expect((await merchant("/api/v1/payments", { body: { amount: "2.00" } })).json.speed).toBe("final");
  });

  test("a bad value or none: 400 with the error on the page, and nothing changed", async () => {
    const { accountId, client } = await signedIn("Steady Speed Shop");
    expect((await client.post("/dashboard/settings/speed", { speed: "standard" })).status).toBe(303);
    const forms: Array<Record<string, string>> = [{ speed: "instant" }, { speed: "FAST" }, { speed: "" }, {}];
    for (const form of forms) {
      const res = await client.post("/dashboard/settings/speed", form);
      const page = await res.text();
      expect({ form, status: res.status }).toEqual({ form, status: 400 });
      expect(page).toContain(
        '<p class="notice bad" role="alert">speed must be one of fast, standard, final, or default',
      );
      expect(checked(page)).toBe("standard");
      expect(await speedOf(accountId)).toBe("standard");
    }
  });

  test("without the session's CSRF token: 403 and nothing changed", async () => {
    const { accountId, client } = await signedIn("Guarded Speed Shop");
    const res = await client.post("/dashboard/settings/speed", { speed: "fast", csrf: "not-the-token" });
    expect(res.status).toBe(403);
    expect(await speedOf(accountId)).toBeNull();
  });

  test("the notice comes only from the fixed word, never from the link's text", async () => {
    const { client } = await signedIn("Crafted Link Shop");
    const page = await (await client.get("/dashboard/settings?saved=%3Cb%3Epwned%3C%2Fb%3E")).text();
    expect(page).not.toContain("Speed saved");
    expect(page).not.toContain("pwned");
  });
});
