/**
 * Fuzz run: hostile requests over every route of a real server subprocess, from the generators
 * the property test uses (test/support/hostile.ts). Counts 5xx answers and error answers whose
 * body is not a JSON `{"error"}`, and follows the server's memory.
 *
 *   bun bench/fuzz.ts [--requests 20000] [--clients 16] [--seed 1] [--chain]
 *
 * Loopback only. Without --chain the server's RPC points at a closed port, so a request valid
 * enough to reach the chain gets the designed 503 "cannot be reached right now", counted apart;
 * with --chain it talks to a local anvil with test USDC, and every 5xx counts.
 * Exits 1 when any 5xx other than that, or any non-JSON error, was seen.
 */
import fc from "fast-check";
import { runAccountCommand } from "../src/cli/accounts.ts";
import { type HostileRequest, hostileRequest, judge, sendHostile } from "../test/support/hostile.ts";
import { spawnTestServer } from "../test/support/server.ts";
import { startChain, type TestChain } from "../test/support/test-chain.ts";
import { numberFlag } from "./lib.ts";

const REQUESTS = numberFlag(process.argv, "requests", 20_000);
const CLIENTS = numberFlag(process.argv, "clients", 16);
const SEED = numberFlag(process.argv, "seed", 1);
const WITH_CHAIN = process.argv.includes("--chain");
const BATCH = 250;

/** One line saying what was sent: enough to replay it by hand. */
function describe(req: HostileRequest): string {
  const body =
    req.body === undefined
      ? "no body"
      : `${req.body.length}-char body${req.chunkBytes ? ` chunked by ${req.chunkBytes}` : ""}`;
  return `${req.method} ${req.path.slice(0, 100)} (${body}; headers ${Object.entries(req.headers)
    .map(([k, v]) => `${k}:${v.length}`)
    .join(",")})`;
}

const chain: TestChain | null = WITH_CHAIN ? await startChain() : null;
const server = await spawnTestServer(
  chain ? { STABLEGATE_RPC_URL: chain.rpcUrl, STABLEGATE_USDC_ADDRESS: chain.usdc } : {},
).catch(async (error) => {
  await chain?.stop();
  throw error;
});
try {
  const created = (await runAccountCommand(
    "account",
    ["create", "--name", "Fuzz", "--payout-address", "0x1111111111111111111111111111111111111111"],
    server.env,
  )) as {
    api_key: string;
  };
  const auth = { authorization: `Bearer ${created.api_key}`, "content-type": "application/json" };
  const payment = (await (
    await fetch(`${server.url}/api/v1/payments`, { method: "POST", headers: auth, body: '{"amount":"5.00"}' })
  ).json()) as { id: string };
  // The subprocess resolves webhook hosts with real DNS; without it the endpoint id is a made-up one.
  const endpointRes = await fetch(`${server.url}/api/v1/webhook_endpoints`, {
    method: "POST",
    headers: auth,
    body: '{"url":"https://example.com/hook"}',
  });
  const endpointId = endpointRes.ok ? ((await endpointRes.json()) as { id: string }).id : "we_none";
  const arbitrary = hostileRequest({ paymentId: payment.id, apiKey: created.api_key, endpointId });

  const start = server.memory();
  console.log(
    `fuzz: ${REQUESTS} hostile requests, ${CLIENTS} clients, seed ${SEED}, ${chain ? "anvil chain" : "no chain"}; server rss at start ${start.rssMb.toFixed(0)} MB`,
  );
  let sent = 0;
  let failures = 0;
  let serverErrors = 0;
  let designed503 = 0;
  let nonJsonErrors = 0;
  const statuses = new Map<number, number>();
  const examples: string[] = [];
  const started = performance.now();

  for (let batch = 0; sent < REQUESTS; batch++) {
    const requests = fc.sample(arbitrary, {
      numRuns: Math.min(BATCH, REQUESTS - sent),
      seed: SEED * 1_000_003 + batch,
    });
    let next = 0;
    const client = async () => {
      for (let req: HostileRequest | undefined; (req = requests[next++]); ) {
        try {
          const res = await sendHostile(server.url, req);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const verdict = judge(req, res);
          if (res.status === 503 && !verdict.serverError) designed503++;
          if (verdict.serverError) serverErrors++;
          if (verdict.nonJsonError) nonJsonErrors++;
          if ((verdict.serverError || verdict.nonJsonError) && examples.length < 5) {
            examples.push(`${describe(req)} -> ${res.status} ${res.contentType} ${res.text.slice(0, 200)}`);
          }
        } catch (error) {
          failures++;
          if (examples.length < 5) examples.push(`${describe(req)} -> ${(error as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    sent += requests.length;
    if (batch % 20 === 19 || sent >= REQUESTS) {
      console.log(`  ${String(sent).padStart(6)} sent, server rss ${server.memory().rssMb.toFixed(0)} MB`);
    }
  }

  const end = server.memory();
  const seconds = (performance.now() - started) / 1000;
  console.log(`\ntotal requests        ${sent} in ${seconds.toFixed(0)} s`);
  console.log(
    `statuses              ${[...statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}:${n}`)
      .join(" ")}`,
  );
  console.log(`5xx                   ${serverErrors} (plus ${designed503} designed 503 "chain cannot be reached")`);
  console.log(`non-JSON error bodies ${nonJsonErrors}`);
  console.log(`connection failures   ${failures}`);
  console.log(
    `server rss            ${start.rssMb.toFixed(0)} MB before, ${end.rssMb.toFixed(0)} MB after, ${end.peakMb.toFixed(0)} MB peak`,
  );
  for (const example of examples) console.log(`! ${example}`);
  process.exitCode = serverErrors + nonJsonErrors + failures > 0 ? 1 : 0;
} finally {
  await server.stop();
  await chain?.stop();
}
