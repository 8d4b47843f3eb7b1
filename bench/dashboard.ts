/**
 * The dashboard with a million payments: seeds 1,000,000 payments over 60 days and three
 * accounts into a fresh data dir (one transaction, prepared inserts, the real schema and
 * indexes), starts `stablegate serve` on it, signs in, and measures, one request at a time:
 *   - the payments page (the first page, and one deep in the list by its Older cursor),
 *   - a filtered search (status + dates, and an exact reference),
 *   - the home page,
 *   - the CSV export of the largest account: rows per second and the server's peak RSS.
 *
 *   bun bench/dashboard.ts [--payments 1000000] [--requests 300]
 *
 * Targets: p99 under 50 ms for each page, at least 100,000 rows/s, memory flat during export.
 * Loopback only, no chain needed; everything it starts is killed at the end.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runAccountCommand } from "../src/cli/accounts.ts";
import { runUserCommand } from "../src/cli/users.ts";
import { sql } from "../src/db/engine.ts";
import { openDb } from "../src/db/index.ts";
import { freePort } from "../src/lib/free-port.ts";
import { splitFee } from "../src/lib/money.ts";
import { numberFlag, percentile, spawnChild, stopChild, waitForHttp } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const PAYMENTS = numberFlag(process.argv, "payments", 1_000_000);
const REQUESTS = numberFlag(process.argv, "requests", 300);
const DAY = 86_400_000;
const FEE_BPS = 100;
/** How the payments of a real shop end up, roughly. */
const STATUS_MIX: Array<[string, number]> = [
  ["confirmed", 0.55],
  ["expired", 0.25],
  ["pending", 0.1],
  ["underpaid", 0.04],
  ["settling", 0.02],
  ["overpaid", 0.02],
  ["failed", 0.02],
];
/** The share of payments each account holds. */
const ACCOUNT_SHARES = [0.8, 0.15, 0.05];

setTimeout(() => {
  console.error("bench: time limit of 20 minutes reached; stopping");
  process.exit(1);
}, 20 * 60_000).unref();

const dataDir = mkdtempSync(join(tmpdir(), "stablegate-bench-dashboard-"));
process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "",
  STABLEGATE_DATA_DIR: dataDir,
  STABLEGATE_CHAIN: "custom",
  STABLEGATE_CHAIN_ID: "31337",
  STABLEGATE_USDC_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  STABLEGATE_RPC_URL: "http://127.0.0.1:9",
  STABLEGATE_LOG_LEVEL: "error",
  STABLEGATE_FEE_RECIPIENT: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
};

const accounts: Array<{ id: string; apiKey: string }> = [];
for (let i = 0; i < ACCOUNT_SHARES.length; i++) {
  const out = (await runAccountCommand(
    "account",
    [
      "create",
      "--name",
      `Shop ${i + 1}`,
      "--payout-address",
      "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      "--fee-bps",
      String(FEE_BPS),
    ],
    env,
  )) as { account: { id: string }; api_key: string };
  accounts.push({ id: out.account.id, apiKey: out.api_key });
}
const user = (await runUserCommand(["create", "--account", accounts[0]!.id, "--email", "bench@shop.example"], env)) as {
  password: string;
};

const now = Date.now();
const seeded = await seed();
console.log(
  `Seeded ${PAYMENTS.toLocaleString("en-US")} payments over 60 days in ${seeded.seconds.toFixed(1)} s ` +
    `(accounts: ${seeded.perAccount.map((n) => n.toLocaleString("en-US")).join(", ")}); database ${seeded.megabytes} MB`,
);

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = spawnChild([process.execPath, join(ROOT, "src/main.ts"), "serve"], {
  ...env,
  STABLEGATE_HOST: "127.0.0.1",
  STABLEGATE_PORT: String(port),
});
try {
  await waitForHttp(`${base}/healthz`, 60_000, server);
  const cookie = await signIn();
  const get = (path: string) => fetch(base + path, { headers: { cookie }, redirect: "manual" });

  // A cursor deep in the list: the Older link of the first page, followed 40 pages down.
  let deep = "/dashboard/payments";
  for (let i = 0; i < 40; i++) deep = olderLink(await (await get(deep)).text()) ?? deep;
  const from = new Date(now - 20 * DAY).toISOString().slice(0, 10);
  const to = new Date(now - 10 * DAY).toISOString().slice(0, 10);
  const pages: Array<[string, string]> = [
    ["payments page (first)", "/dashboard/payments"],
    ["payments page (40 pages down)", deep],
    ["filtered: status=failed, 10 days", `/dashboard/payments?status=failed&from=${from}&to=${to}`],
    ["search: exact reference", "/dashboard/payments?q=order-123457"],
    ["search: customer email", "/dashboard/payments?q=customer77%40example.com"],
    ["home page", "/dashboard"],
  ];
  console.log(`\nPage latency, ${REQUESTS} requests each, one at a time (after 20 warm-up requests):`);
  console.log(`${"page".padEnd(34)}  ${"p50 ms".padStart(8)}  ${"p99 ms".padStart(8)}  ${"max ms".padStart(8)}`);
  for (const [name, path] of pages) {
    const ms = await timed(() => get(path), REQUESTS);
    console.log(`${name.padEnd(34)}  ${fmt(percentile(ms, 0.5))}  ${fmt(percentile(ms, 0.99))}  ${fmt(ms.at(-1)!)}`);
  }

  const rssBefore = memory(server.pid).rss;
  const t0 = performance.now();
  const res = await get("/dashboard/payments.csv");
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  let peakRss = 0;
  const samples: string[] = [];
  const reader = res.body!.getReader();
  for (let chunk = 0; ; chunk++) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (let at = value.indexOf(10); at !== -1; at = value.indexOf(10, at + 1)) lines++;
    if (chunk % 50 === 0) {
      const rss = memory(server.pid).rss;
      peakRss = Math.max(peakRss, rss);
      if (chunk % 200 === 0) samples.push(`${Math.round(lines / 1000)}k rows: ${mb(rss)} MB`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = memory(server.pid);
  const rows = lines - 1;
  console.log(
    `\nCSV export of ${rows.toLocaleString("en-US")} rows (${(bytes / 1e6).toFixed(0)} MB): ${seconds.toFixed(1)} s, ` +
      `${Math.round(rows / seconds).toLocaleString("en-US")} rows/s`,
  );
  console.log(`Server RSS while exporting: ${samples.join(", ")}`);
  console.log(
    `Server RSS: ${mb(rssBefore)} MB before the export, at most ${mb(Math.max(peakRss, after.rss))} MB sampled during it, ` +
      `${mb(after.rss)} MB after; peak RSS of the whole run (VmHWM) ${mb(after.hwm)} MB`,
  );
} finally {
  await stopChild(server);
}
process.exit(0);

/**
 * One transaction of inserts (the engine prepares each statement once), with the settled figures
 * the settler would have recorded.
 */
async function seed() {
  const started = performance.now();
  const db = openDb(dataDir);
  await db.exec("PRAGMA synchronous = OFF");
  const daily = new Map<string, { gross: bigint; fee: bigint }>();
  const perAccount = ACCOUNT_SHARES.map(() => 0);
  const start = now - 60 * DAY;
  const random = randomBytes(52 * 4096);
  await db.transaction(async () => {
    for (let i = 0; i < PAYMENTS; i++) {
      if (i % 4096 === 0) randomBytes(52 * 4096).copy(random);
      const bytes = random.subarray((i % 4096) * 52, (i % 4096) * 52 + 52);
      const roll = bytes[0]! / 256;
      let acc = 0;
      const a = ACCOUNT_SHARES.findIndex((share) => (acc += share) > roll);
      const account = accounts[a === -1 ? 0 : a]!;
      perAccount[a === -1 ? 0 : a]!++;
      const status = pick(bytes[1]! / 256);
      // Oldest first, evenly over 60 days: the order a real server writes them in.
      const created = Math.floor(start + (i / PAYMENTS) * 60 * DAY);
      const amount = BigInt(1 + (bytes[2]! % 200)) * 1_000_000n + BigInt(bytes[3]! % 100) * 10_000n;
      const paid = status === "confirmed";
      const received =
        paid || status === "settling"
          ? amount
          : status === "underpaid"
            ? amount / 2n
            : status === "overpaid"
              ? amount + 1_000_000n
              : null;
      const { fee } = splitFee(paid ? amount : 0n, FEE_BPS);
      const id = `0x${bytes.subarray(4, 36).toString("hex")}`;
      const deposit = `0x${bytes.subarray(36, 52).toString("hex")}${i.toString(16).padStart(8, "0")}`;
      const email = bytes[1]! % 3 === 0 ? `customer${i % 5000}@example.com` : null;
      const invoice = bytes[2]! % 10 === 0 ? `INV-${i}` : null;
      await db.run(
        sql`INSERT INTO payments (id, account_id, status, amount, amount_received, fee_bps, fee_recipient, payout_address,
             chain_id, token_address, deposit_address, description, reference, customer_email, invoice_number,
             expires_at, created_at, updated_at, amount_settled, fee_settled)
           VALUES (${id}, ${account.id}, ${status}, ${amount}, ${received}, ${FEE_BPS}, ${env.STABLEGATE_FEE_RECIPIENT!},
             ${"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, 31337, ${env.STABLEGATE_USDC_ADDRESS!}, ${deposit},
             ${`Order ${i}: ${1 + (bytes[2]! % 5)} items`}, ${`order-${i}`}, ${email}, ${invoice},
             ${created + 3_600_000}, ${created}, ${created}, ${paid ? amount : 0n}, ${fee})`,
      );
      if (paid) {
        const key = `${account.id}/${Math.floor((created + 120_000) / DAY)}`;
        const day = daily.get(key) ?? { gross: 0n, fee: 0n };
        day.gross += amount;
        day.fee += fee;
        daily.set(key, day);
      }
    }
    for (const [key, { gross, fee }] of daily) {
      const [account, day] = key.split("/") as [string, string];
      await db.run(
        sql`INSERT INTO settled_daily (account_id, day, gross, fee) VALUES (${account}, ${Number(day)}, ${gross}, ${fee})`,
      );
    }
  });
  await db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await db.close();
  const megabytes = Math.round(Bun.file(join(dataDir, "stablegate.db")).size / 1e6);
  return { seconds: (performance.now() - started) / 1000, perAccount, megabytes };
}

function pick(roll: number): string {
  let acc = 0;
  for (const [status, share] of STATUS_MIX) if ((acc += share) > roll) return status;
  return "confirmed";
}

async function signIn(): Promise<string> {
  const form = await fetch(`${base}/dashboard/login`);
  const loginCookie = form.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${base}/dashboard/login`, {
    method: "POST",
    body: new URLSearchParams({ email: "bench@shop.example", password: user.password, csrf }),
    headers: { cookie: loginCookie },
    redirect: "manual",
  });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith("stablegate_session="));
  if (res.status !== 303 || !session) throw new Error(`sign-in failed: ${res.status}`);
  return session;
}

function olderLink(html: string): string | null {
  const href = /href="(\/dashboard\/payments\?[^"]*before=[^"]+)"/.exec(html)?.[1];
  return href ? href.replaceAll("&#38;", "&") : null;
}

/** Latencies of `count` requests one after another, sorted; each body is read in full. */
async function timed(request: () => Promise<Response>, count: number): Promise<number[]> {
  for (let i = 0; i < 20; i++) await (await request()).arrayBuffer();
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await request();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b);
}

/** The server's resident memory now and at its peak, from /proc (Linux), in bytes. */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

function fmt(ms: number): string {
  return ms.toFixed(2).padStart(8);
}

function mb(bytes: number): number {
  return Math.round(bytes / 1e6);
}
