/**
 * Where a create's time goes: runs the server from source under Bun's CPU profiler on SQLite (or
 * PostgreSQL with `--db postgres`), sends `--seconds` of payment creates from `--clients`
 * concurrent clients, stops it, and prints the functions with the most self time and the
 * profile's own summary. The markdown profile is kept for reading in full.
 *
 *   bun bench/profile-api.ts [--db sqlite|postgres] [--seconds 5] [--clients 32] [--retrieves]
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../src/lib/free-port.ts";
import {
  BENCH_PAYOUT,
  CREATE_BODY,
  numberFlag,
  offlineServerEnv,
  runLoad,
  spawnChild,
  stopChild,
  waitForHttp,
} from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const SECONDS = numberFlag(process.argv, "seconds", 5);
const CLIENTS = numberFlag(process.argv, "clients", 32);
const POSTGRES = process.argv.includes("postgres");
const RETRIEVES = process.argv.includes("--retrieves");

const dir = mkdtempSync(join(tmpdir(), "stablegate-profile-"));
const env: Record<string, string | undefined> = {
  ...offlineServerEnv(dir),
  // Imported only when asked, so the script also profiles older builds that predate it.
  ...(POSTGRES
    ? { STABLEGATE_DATABASE_URL: await (await import("../test/support/postgres.ts")).createTestDatabase("durable") }
    : {}),
};
const main = join(ROOT, "src/main.ts");
const created = Bun.spawnSync(
  ["bun", main, "account", "create", "--name", "Profile", "--payout-address", BENCH_PAYOUT],
  {
    env,
  },
);
if (created.exitCode !== 0) throw new Error(`account create failed: ${created.stderr.toString()}`);
const apiKey = (JSON.parse(created.stdout.toString()) as { api_key: string }).api_key;

const port = await freePort();
const profileDir = join(dir, "profile");
const server = spawnChild(
  ["bun", "--cpu-prof-md", `--cpu-prof-dir=${profileDir}`, main, "serve"],
  { ...env, STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: String(port) },
  join(dir, "server.log"),
);
const base = `http://127.0.0.1:${port}`;
await waitForHttp(`${base}/healthz`, 20_000, server);
const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
const body = CREATE_BODY;
let id = "";
if (RETRIEVES) {
  const response = await fetch(`${base}/api/v1/payments`, { method: "POST", headers, body });
  id = ((await response.json()) as { id: string }).id;
}
const result = await runLoad({
  name: RETRIEVES ? "GET /api/v1/payments/:id" : "POST /api/v1/payments",
  clients: CLIENTS,
  seconds: SECONDS,
  request: () =>
    RETRIEVES
      ? fetch(`${base}/api/v1/payments/${id}`, { headers })
      : fetch(`${base}/api/v1/payments`, { method: "POST", headers, body }),
});
await stopChild(server, 10_000);
console.log(`${result.name}: ${result.perSecond.toFixed(0)}/s under the profiler (p50 ${result.p50Ms.toFixed(1)} ms)`);
const file = readdirSync(profileDir).find((name) => name.endsWith(".md"));
if (!file) throw new Error(`no profile in ${profileDir}`);
const profile = readFileSync(join(profileDir, file), "utf8");
console.log(profile.split("\n").slice(0, 80).join("\n"));
console.log(`\nThe whole profile: ${join(profileDir, file)}`);
