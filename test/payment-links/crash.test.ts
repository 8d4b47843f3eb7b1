/**
 * kill -9 of a real `stablegate serve` process: every payment link and every payment started
 * through one that was acknowledged is there after a restart on the same data directory, and a
 * form sent again after the restart still leads to the payment it created before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { fetchFrom } from "../support/forwarding-proxy.ts";
import { type ServeProcess, startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir, testEnv } from "../support/server.ts";

let dataDir: string;
let env: Record<string, string>;
let server: ServeProcess | null = null;

beforeAll(() => {
  dataDir = makeTempDir("stablegate-links-crash-");
  env = testEnv(dataDir);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The token of one rendering of a link's page, as a browser reads it from the form. */
async function formToken(url: string, linkId: string): Promise<string> {
  const page = await (await fetch(`${url}/l/${linkId}`)).text();
  return /name="nonce" value="([^"]+)"/.exec(page)![1]!;
}

/**
 * Submits a link's form with `nonce`, as a browser does, from the `i`th payer's own address (one
 * client may start only a few payments at once); answers the Location of the 303.
 */
async function submit(url: string, linkId: string, nonce: string, amount: string, i: number): Promise<string | null> {
  const res = await fetchFrom(`127.0.3.${i + 1}`, `${url}/l/${linkId}`, {
    method: "POST",
    body: new URLSearchParams({ nonce, amount }),
  });
  return res.status === 303 ? res.headers.get("location") : null;
}

test("acknowledged links and link payments survive kill -9; a resent form finds its payment", async () => {
  const { api_key } = (await runAccountCommand(
    "account",
    ["create", "--name", "Crash Shop", "--payout-address", "0x1111111111111111111111111111111111111111"],
    env,
  )) as { api_key: string };
  server = await startServeProcess(env);
  const before = api(server.url, api_key);

  // Links and payments created concurrently, so group commits carry several at once.
  const links = await Promise.all(
    Array.from({ length: 8 }, (_, i) => before("/api/v1/payment_links", { body: { description: `Jar ${i}` } })),
  );
  expect(links.map((r) => r.status)).toEqual(Array(8).fill(201));
  const forms = await Promise.all(
    links.map(async (r) => ({ linkId: r.json.id as string, nonce: await formToken(server!.url, r.json.id) })),
  );
  const locations = await Promise.all(forms.map((f, i) => submit(server!.url, f.linkId, f.nonce, `${i + 1}.00`, i)));
  expect(locations.every((l) => l?.startsWith("/pay/0x"))).toBe(true);

  await server.stop(); // SIGKILL, straight after the last answer
  server = await startServeProcess(env);
  const after = api(server.url, api_key);

  const listed = await after("/api/v1/payment_links?limit=100");
  expect(listed.json.data.map((l: { id: string }) => l.id).sort()).toEqual(forms.map((f) => f.linkId).sort());
  for (const [i, f] of forms.entries()) {
    const payment = await after(`/api/v1/payments/${locations[i]!.slice("/pay/".length)}`);
    expect(payment.json).toMatchObject({ payment_link: f.linkId, amount: `${i + 1}.00` });
    expect(await submit(server.url, f.linkId, f.nonce, `${i + 1}.00`, i)).toBe(locations[i]!);
  }
  const all = await after("/api/v1/payments?limit=100");
  expect(all.json.data).toHaveLength(forms.length);
});
