/**
 * The package as Node users get it: built by its own `build` script (tsc, tsconfig.build.json),
 * laid out as an installed @stablegate/client, imported by plain Node through the package's
 * `exports`, and used against the real server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeTempDir, startTestServer, type TestServer } from "../support/server.ts";
import { manualSignature } from "../support/webhook-delivery.ts";

const ROOT = resolve(import.meta.dir, "../..");
const PACKAGE = join(ROOT, "clients/typescript");

let server: TestServer;
let dir: string;

async function run(command: string[], cwd: string, env: Record<string, string> = {}) {
  const child = Bun.spawn(command, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, status] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, status };
}

beforeAll(async () => {
  server = await startTestServer();
  dir = makeTempDir("stablegate-client-node-");
  // An installed copy: node_modules/@stablegate/client with its manifest and dist, beside its dependency.
  const installed = join(dir, "node_modules/@stablegate/client");
  mkdirSync(installed, { recursive: true });
  cpSync(join(PACKAGE, "package.json"), join(installed, "package.json"));
  const build = await run(
    [join(ROOT, "node_modules/.bin/tsc"), "-p", "tsconfig.build.json", "--outDir", join(installed, "dist")],
    PACKAGE,
  );
  if (build.status !== 0) throw new Error(`the client's build failed:\n${build.stdout}${build.stderr}`);
  symlinkSync(join(ROOT, "node_modules/standardwebhooks"), join(dir, "node_modules/standardwebhooks"));
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("@stablegate/client under Node", () => {
  test("imports from dist through exports, creates and retrieves a payment, maps a 404, verifies a webhook", async () => {
    const secret = `whsec_${Buffer.from("a secret of thirty-two bytes!!!!").toString("base64")}`;
    const body = JSON.stringify({ id: "evt_AAAAAAAAAAAAAAAAAAAAAAAA", object: "event", type: "test" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = {
      "webhook-id": "evt_AAAAAAAAAAAAAAAAAAAAAAAA",
      "webhook-timestamp": timestamp,
      "webhook-signature": manualSignature(secret, "evt_AAAAAAAAAAAAAAAAAAAAAAAA", timestamp, body),
    };
    writeFileSync(
      join(dir, "main.mjs"),
      `import { NotFoundError, Stablegate, verifyWebhook, WebhookVerificationError } from "@stablegate/client";
const client = new Stablegate({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
const created = await client.payments.create({ amount: "3.50" }, { idempotencyKey: "node-1" });
const retrieved = await client.payments.retrieve(created.id);
const missing = await client.payments.retrieve("0x" + "ab".repeat(32)).catch((e) => e);
const { body, headers, secret } = JSON.parse(process.env.HOOK);
const event = verifyWebhook(body, headers, secret);
let tampered;
try { verifyWebhook(body + " ", headers, secret); } catch (e) { tampered = e instanceof WebhookVerificationError; }
console.log(JSON.stringify({ created: created.id, same: retrieved.id === created.id, amount: retrieved.amount,
  notFound: missing instanceof NotFoundError, status: missing.status, event: event.id, tampered }));
`,
    );
    const { apiKey } = await server.createAccount();
    const result = await run(["node", "main.mjs"], dir, {
      KEY: apiKey,
      BASE: server.url,
      HOOK: JSON.stringify({ body, headers, secret }),
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ same: true, amount: "3.50", notFound: true, status: 404, tampered: true });
    expect(out.event).toBe("evt_AAAAAAAAAAAAAAAAAAAAAAAA");
    expect(out.created).toMatch(/^0x[0-9a-f]{64}$/);
  });
});
