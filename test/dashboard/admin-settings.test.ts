/**
 * The dashboard's settings page over real HTTP with a signed-in client: the account, its payout
 * address (read-only, with the CLI command that changes it), its fee and what it means, the
 * chain, and the relayer's gas balance, which is "unavailable" (never a 500, never a hang) when
 * the RPC refuses connections or accepts them and never answers. The balance from a live chain
 * is checked in browser-admin.test.ts, which runs on anvil.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { loadConfig } from "../../src/config.ts";
import { createDashboardUser, signIn } from "../support/dashboard.ts";
import { startTestServer, TEST_PAYOUT, type TestServer, testEnv } from "../support/server.ts";

const FEE_RECIPIENT = "0x2222222222222222222222222222222222222222";

/** Its RPC (127.0.0.1:1) refuses connections; the server's default fee is 1%. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ feeBps: 100, feeRecipient: FEE_RECIPIENT });
});
afterAll(() => server?.stop());

async function settingsOf(target: TestServer, accountId: string): Promise<{ status: number; page: string }> {
  const client = await signIn(target.url, await createDashboardUser(target.env, accountId));
  const res = await client.get("/dashboard/settings");
  return { status: res.status, page: await res.text() };
}

describe("the settings page", () => {
  test("shows the account, its payout address read-only with the command that changes it, and the fee", async () => {
    const account = server.createAccount("Settled Shop");
    const { status, page } = await settingsOf(server, account.accountId);
    expect(status).toBe(200);
    expect(page).toContain('<dd id="account-name">Settled Shop</dd>');
    expect(page).toContain(`<code class="mono" id="payout-address">${TEST_PAYOUT}</code>`);
    expect(page).toContain(`stablegate account set-payout ${account.accountId} ADDRESS`);
    // Shown, never changed here: no form on the page but sign-out.
    expect(page.match(/<form /g)).toHaveLength(1);
    expect(page).toContain('<span id="fee">100 bps</span>');
    expect(page).toContain("the server&#39;s default");
    expect(page).toContain("1% of every amount received goes to the platform");
    expect(page).toContain('<dd id="chain-name">custom <span class="muted">(chain id 31337)</span></dd>');
  });

  test("an account's own fee is shown as its own", async () => {
    const created = runAccountCommand(
      "account",
      ["create", "--name", "Fee Shop", "--payout-address", TEST_PAYOUT, "--fee-bps", "250"],
      { ...server.env, STABLEGATE_FEE_RECIPIENT: FEE_RECIPIENT },
    ) as { account: { id: string } };
    const { page } = await settingsOf(server, created.account.id);
    expect(page).toContain('<span id="fee">250 bps</span>');
    expect(page).toContain("this account&#39;s own");
    expect(page).toContain("2.5% of every amount received");
  });

  test("with the RPC refusing connections the relayer's balance is unavailable, and the page still loads", async () => {
    const { status, page } = await settingsOf(server, server.createAccount("Offline Shop").accountId);
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
      const { status, page } = await settingsOf(hung, hung.createAccount("Hung Shop").accountId);
      expect(status).toBe(200);
      expect(page).toContain('id="relayer-balance">Unavailable</span>');
    } finally {
      // Closing the silent node's connections first lets the server's loops give up at once.
      silent.stop(true);
      await hung?.stop();
    }
  });
});
