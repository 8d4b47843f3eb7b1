/**
 * `stablegate dev`, the README's first command, as a newcomer runs it: a real process that starts
 * two local chains, the server and an account, pays an example payment, and stops everything on
 * Ctrl-C - or, when a step fails, stops what it had already started.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markedProcesses, TEST_RUN_MARKER } from "../../scripts/test-leftovers.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { drainTail } from "../../src/lib/stream-tail.ts";
import { runToExit } from "../support/cli.ts";
import { postSignIn, setCookies } from "../support/dashboard.ts";
import { childEnv, MAIN } from "../support/serve-process.ts";
import { api } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `stablegate dev` in a directory of its own, its processes marked so the test can find them all. */
async function spawnDev(extra: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "stablegate-dev-test-"));
  const marker = `dev-${crypto.randomUUID()}`;
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, MAIN, "dev"], {
    cwd,
    env: childEnv({
      STABLEGATE_PORT: String(port),
      STABLEGATE_DATA_DIR: join(cwd, "data"),
      [TEST_RUN_MARKER]: marker,
      ...extra,
    }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = drainTail(proc.stdout);
  const stderr = drainTail(proc.stderr);
  cleanups.push(async () => {
    for (const { pid } of markedProcesses(marker)) process.kill(pid, "SIGKILL");
    rmSync(cwd, { recursive: true, force: true });
  });
  return { proc, cwd, marker, url: `http://127.0.0.1:${port}`, stdout, stderr };
}

/** The banner `stablegate dev` prints once everything runs. */
async function bannerOf(dev: Awaited<ReturnType<typeof spawnDev>>): Promise<string> {
  let banner = "";
  await waitFor(
    async () => {
      if (dev.proc.exitCode !== null) throw new Error(`dev exited with ${dev.proc.exitCode}: ${await dev.stderr()}`);
      banner = await dev.stdout();
      return banner.includes("Ctrl-C stops everything.");
    },
    90_000,
    "the dev banner",
  );
  return banner;
}

/** `stablegate dev pay ...` beside a running dev stack (it finds the stack through the working directory). */
async function devPay(dev: Awaited<ReturnType<typeof spawnDev>>, args: string[]) {
  return runToExit([process.execPath, MAIN, "dev", "pay", ...args], { cwd: dev.cwd, env: childEnv({}) });
}

test("dev starts the stack, its example payment reaches confirmed, and Ctrl-C stops every process it started", async () => {
  const dev = await spawnDev();
  const banner = await bannerOf(dev);
  const apiKey = banner.match(/API key\s+(sk_live_\w+)/)![1]!;
  const paymentId = banner.match(/Example payment (0x[0-9a-f]{64})/)![1]!;

  // The dashboard user the banner prints signs in, and lands on the home page.
  const [, loginUrl, email, password] = banner.match(/Dashboard (\S+)\n\s+email\s+(\S+)\n\s+password\s+(\S+)/)!;
  expect(new URL(loginUrl!).pathname).toBe("/dashboard/login");
  const signedIn = await postSignIn(dev.url, { email: email!, password: password! });
  expect([signedIn.status, signedIn.headers.get("location")]).toEqual([303, "/dashboard"]);
  const home = await fetch(`${dev.url}/dashboard`, {
    headers: { cookie: `stablegate_session=${setCookies(signedIn).get("stablegate_session")}` },
  });
  expect(await home.text()).toContain(email!);
  expect(existsSync(join(dev.cwd, ".stablegate-dev.json"))).toBe(true);

  // The API reference the banner points at is served, with the document it renders.
  const [, docsUrl, documentUrl] = banner.match(/API docs\s+(\S+)\s+\(OpenAPI document: (\S+)\)/)!;
  expect((await fetch(docsUrl!)).status).toBe(200);
  expect(((await (await fetch(documentUrl!)).json()) as { openapi: string }).openapi).toBe("3.1.0");

  await waitFor(
    async () => (await api(dev.url, apiKey)(`/api/v1/payments/${paymentId}`)).json.status === "confirmed",
    60_000,
    "the example payment to be confirmed",
  );
  // Emails go to the local SMTP catcher, written where the banner says: the example's invoice and receipt.
  const emails = banner.match(/emails\s+(\S+)\s+\(one \.eml file per email/)![1]!;
  const subjects = () =>
    readdirSync(emails).map((file) => /^Subject: (.*)$/m.exec(readFileSync(join(emails, file), "utf8"))?.[1] ?? "");
  await waitFor(
    () => subjects().some((s) => s.startsWith("Invoice DEV-1001")) && subjects().some((s) => s.startsWith("Receipt")),
    30_000,
    "the example's invoice and receipt in the emails folder",
  );
  // Both chains and the attestation service run under this process while it lives.
  expect(markedProcesses(dev.marker).filter((p) => p.command.includes("anvil")).length).toBe(2);

  dev.proc.kill("SIGINT");
  expect(await dev.proc.exited).toBe(0);
  await waitFor(() => markedProcesses(dev.marker).length === 0, 10_000, "every process of the dev stack to stop");
  expect(existsSync(join(dev.cwd, ".stablegate-dev.json"))).toBe(false);
}, 150_000);

test("a dev stack whose server cannot start stops the chains it had started", async () => {
  const taken = createServer().listen(0, "0.0.0.0");
  await new Promise((resolve) => taken.once("listening", resolve));
  cleanups.push(() => new Promise((resolve) => taken.close(resolve)));
  const port = (taken.address() as { port: number }).port;

  const dev = await spawnDev({ STABLEGATE_PORT: String(port) });
  expect(await dev.proc.exited).not.toBe(0);
  expect(await dev.stderr()).toContain("STABLEGATE_PORT");
  await waitFor(() => markedProcesses(dev.marker).length === 0, 10_000, "the chains dev started to stop");
}, 120_000);

test("dev pay --chain local-source pays with a plain transfer on the source chain, credited there", async () => {
  const dev = await spawnDev();
  const banner = await bannerOf(dev);
  const apiKey = banner.match(/API key\s+(sk_live_\w+)/)![1]!;
  expect(banner).toContain("--chain local-source");
  const merchant = api(dev.url, apiKey);
  const payment = (await merchant("/api/v1/payments", { body: { amount: "7.00" } })).json;

  const unknown = await devPay(dev, [payment.id, "--chain", "base"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(
    'unknown chain "base": the dev stack\'s chains are custom (the default) and local-source',
  );

  const paid = await devPay(dev, [payment.id, "7.00", "--chain", "local-source"]);
  expect(paid.code).toBe(0);
  const out = JSON.parse(paid.stdout);
  expect(out).toMatchObject({ payment_id: payment.id, chain: "local-source", amount_units: "7000000" });

  const credited = await waitFor(
    async () => {
      const p = (await merchant(`/api/v1/payments/${payment.id}`)).json;
      return p.amount_received === "7.00" ? p : undefined;
    },
    30_000,
    "the source-chain transfer to be credited",
  );
  expect(credited.transfers).toEqual([
    expect.objectContaining({
      chain: "local-source",
      chain_id: 31338,
      tx_hash: out.tx_hash,
      amount: "7.00",
      confirmed: true,
    }),
  ]);

  dev.proc.kill("SIGINT");
  expect(await dev.proc.exited).toBe(0);
}, 150_000);
