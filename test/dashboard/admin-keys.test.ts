/**
 * The dashboard's API keys page over real HTTP with a signed-in client: the list (hint, created,
 * last used, revoked), a new key shown once and working at once, revocation on confirmation
 * (the key then gets 401), and another account's key answered 404 with nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { api, startTestServer, type TestAccount, type TestServer } from "../support/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.stop());

async function merchant(name: string): Promise<{ account: TestAccount; client: DashboardClient }> {
  const account = await server.createAccount(name);
  const user = await createDashboardUser(server.env, account.accountId);
  return { account, client: await signIn(server.url, user) };
}

const keysPage = async (client: DashboardClient) => (await client.get("/dashboard/keys")).text();
const formToken = async (client: DashboardClient) =>
  /name="token" value="([0-9A-Za-z]{32})"/.exec(await keysPage(client))![1]!;
/** The row of one key on the page, from its <tr id> to its </tr>. */
const rowOf = (page: string, keyId: string) => new RegExp(`<tr id="${keyId}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? "";
const works = async (key: string) => (await api(server.url, key)("/api/v1/payments")).status;

describe("the keys list", () => {
  test("shows each key's hint, status, creation and last use; never the key itself", async () => {
    const { account, client } = await merchant("Listing Shop");
    const before = rowOf(await keysPage(client), account.keyId);
    expect(before).toContain(`sk_live_...${account.apiKey.slice(-4)}`);
    expect(before).toContain('<span class="badge enabled">Active</span>');
    expect(before).toContain('<span class="muted">Never</span>');
    expect(await works(account.apiKey)).toBe(200);
    const page = await keysPage(client);
    const after = rowOf(page, account.keyId);
    expect(after).not.toContain("Never");
    expect(after.match(/<time datetime="[^"]+Z" data-local>/g)).toHaveLength(2); // created, last used
    expect(page).not.toContain(account.apiKey);
  });
});

describe("creating a key", () => {
  test("shows the key once with a copy button; it works on the API at once and is listed by its hint", async () => {
    const { account, client } = await merchant("Creating Shop");
    const res = await client.post("/dashboard/keys", { token: await formToken(client) });
    expect(res.status).toBe(200);
    const page = await res.text();
    const key = /<code class="mono secret" id="new-api-key">(sk_live_[0-9A-Za-z]{32})<\/code>/.exec(page)?.[1];
    expect(key).toBeDefined();
    expect(page).toContain(`data-copy="${key}"`);
    expect(page).toContain("This is the only time the key is shown");
    expect(await works(key!)).toBe(200);
    const list = await keysPage(client);
    expect(list).not.toContain(key!);
    expect(list).toContain(`sk_live_...${key!.slice(-4)}`);
    expect(list.match(/<tr id="key_/g)).toHaveLength(2);
    expect(rowOf(list, account.keyId)).toContain("Active");
  });

  test("the same form submitted twice creates one key and does not show it again", async () => {
    const { client } = await merchant("Double Key Shop");
    const token = await formToken(client);
    const first = await (await client.post("/dashboard/keys", { token })).text();
    const second = await (await client.post("/dashboard/keys", { token })).text();
    const key = /id="new-api-key">(sk_live_[0-9A-Za-z]{32})</.exec(first)![1]!;
    expect(second).not.toContain(key);
    expect(second).not.toMatch(/sk_live_[0-9A-Za-z]{32}/);
    expect(second).toContain("This form was already submitted and created key key_");
    expect((await keysPage(client)).match(/<tr id="key_/g)).toHaveLength(2);
  });
});

describe("revoking a key", () => {
  test("needs the confirmation box; then the key gets 401 on the API and is listed as revoked", async () => {
    const { account, client } = await merchant("Revoking Shop");
    const unconfirmed = await client.post(`/dashboard/keys/${account.keyId}/revoke`, {});
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.text()).toContain("confirm: tick the box");
    expect(await works(account.apiKey)).toBe(200);

    const res = await client.post(`/dashboard/keys/${account.keyId}/revoke`, { confirm: "yes" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/keys?revoked=${account.keyId}`);
    const refused = await api(server.url, account.apiKey)("/api/v1/payments");
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ error: "invalid API key" });
    const page = await (await client.get(res.headers.get("location")!)).text();
    expect(page).toContain("Key revoked");
    const row = rowOf(page, account.keyId);
    expect(row).toContain('<span class="badge revoked">Revoked</span>');
    expect(row).not.toContain("/revoke");
  });

  test("another account's key is 404, and it keeps working", async () => {
    const owner = await merchant("Key Owner Shop");
    const other = await merchant("Key Prying Shop");
    const res = await other.client.post(`/dashboard/keys/${owner.account.keyId}/revoke`, { confirm: "yes" });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("<h1>Not found</h1>");
    expect(await works(owner.account.apiKey)).toBe(200);
    expect(await keysPage(other.client)).not.toContain(owner.account.keyId);
  });
});
