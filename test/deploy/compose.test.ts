/**
 * deploy/compose.yaml, the "Scaling out" topology of docs/postgresql.md, checked as far as a machine without a
 * container engine allows: the file parses, and describes PostgreSQL, two or more replicas with
 * one database, relayer key and public address and a data volume each, and Caddy in front
 * balancing on /readyz; every STABLEGATE_* variable it sets is one docs/configuration.md documents. Then
 * the same topology runs as processes: the suite's PostgreSQL, anvil, two `serve` replicas with
 * the environment the compose file gives them, and a TLS proxy balancing between them the way
 * the Caddyfile does. Through it, a payment is made and read back, served by both replicas.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseIpRange } from "../../src/lib/ip-address.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { REPO_ROOT, type ServeProcess, startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir } from "../support/server.ts";
import { TEST_METRICS_TOKEN } from "../support/stack.ts";
import { startChain, type TestChain } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

const DEPLOY = resolve(REPO_ROOT, "deploy");
const read = (name: string) => readFileSync(join(DEPLOY, name), "utf8");

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  env_file?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: string[] | Record<string, unknown>;
  ports?: string[];
}
const compose = Bun.YAML.parse(read("compose.yaml")) as {
  services: Record<string, Service>;
  networks?: { default?: { ipam?: { config?: Array<{ subnet: string }> } } };
};
const services = Object.entries(compose.services);
const replicas = services.filter(([, s]) => s.image === "stablegate");
/** `KEY=value` lines of the env file the replicas share, as its example gives them. */
const envExample = Object.fromEntries(
  read("stablegate.env.example")
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
);
const documented = new Set(
  [
    ...readFileSync(join(REPO_ROOT, "docs", "configuration.md"), "utf8").matchAll(/^\| `(STABLEGATE_[A-Z0-9_]+)`/gm),
  ].map((m) => m[1]),
);

describe("deploy/compose.yaml", () => {
  test("PostgreSQL with a volume and a health check; replicas wait for it", () => {
    const [name, postgres] = services.find(([, s]) => s.image?.startsWith("postgres:"))!;
    expect(postgres.volumes?.some((v) => v.endsWith(":/var/lib/postgresql"))).toBe(true);
    expect(postgres.environment?.POSTGRES_PASSWORD_FILE).toStartWith("/run/secrets/");
    for (const [, replica] of replicas) {
      expect(replica.depends_on).toEqual({ [name]: { condition: "service_healthy" } });
    }
  });

  test("two or more replicas: one image, one env file, one public address, a data volume each", () => {
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    for (const [, replica] of replicas) {
      expect(replica.command).toEqual(["serve"]);
      expect(replica.env_file).toBe("stablegate.env");
      expect(Object.keys(replica.environment!)).toEqual(["STABLEGATE_BASE_URL", "STABLEGATE_TRUSTED_PROXIES"]);
      expect(replica.environment!.STABLEGATE_BASE_URL).toStartWith("https://${STABLEGATE_DOMAIN");
    }
    const volumes = replicas.map(([, r]) => r.volumes!.find((v) => v.endsWith(":/data")));
    expect(new Set(volumes).size).toBe(replicas.length);
    // No secret inline: the database URL and the relayer key come from the env file.
    expect(read("compose.yaml")).not.toMatch(/STABLEGATE_(DATABASE_URL|RELAYER_KEY)/);
    expect(Object.keys(envExample)).toEqual(
      expect.arrayContaining(["STABLEGATE_DATABASE_URL", "STABLEGATE_RELAYER_KEY"]),
    );
  });

  test("every STABLEGATE_* variable it sets is one docs/configuration.md documents", () => {
    const set = [...replicas.flatMap(([, r]) => Object.keys(r.environment ?? {})), ...Object.keys(envExample)];
    expect(set.length).toBeGreaterThan(3);
    for (const name of set) expect([name, documented.has(name)]).toEqual([name, true]);
  });

  test("Caddy in front: TLS for the domain, every replica behind it, balanced on /readyz", () => {
    const [, caddy] = services.find(([, s]) => s.image?.startsWith("caddy:"))!;
    expect(caddy.ports).toEqual(expect.arrayContaining(["443:443", "80:80"]));
    expect(caddy.depends_on).toEqual(replicas.map(([name]) => name));
    const caddyfile = read("Caddyfile");
    expect(caddyfile).toContain("{$STABLEGATE_DOMAIN} {");
    const upstreams = caddyfile
      .match(/reverse_proxy ([^{]+)\{/)![1]!
      .trim()
      .split(/\s+/);
    expect(upstreams).toEqual(replicas.map(([name]) => `${name}:8080`));
    expect(caddyfile).toMatch(/health_uri \/readyz/);
  });

  test("the replicas believe X-Forwarded-For from Caddy's network alone, a range fixed in the file", () => {
    const subnets = compose.networks?.default?.ipam?.config?.map((c) => c.subnet);
    expect(subnets).toHaveLength(1);
    expect(parseIpRange(subnets![0]!)).not.toBeNull();
    for (const [, replica] of replicas) expect(replica.environment!.STABLEGATE_TRUSTED_PROXIES).toBe(subnets![0]!);
    // No service picks a network of its own: Caddy and the replicas meet on that one.
    for (const [, service] of services) expect((service as { networks?: unknown }).networks).toBeUndefined();
  });
});

describe("the same topology as processes", () => {
  let chain: TestChain;
  const processes: ServeProcess[] = [];
  const dirs: string[] = [];
  let proxy: ReturnType<typeof Bun.serve> | null = null;
  /** Which replica answered each request through the proxy. */
  const servedBy: number[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    chain = await startChain();
    // The env file, with the test's database, chain and relayer in place of the operator's.
    env = {
      ...envExample,
      STABLEGATE_DATABASE_URL: await createTestDatabase(),
      STABLEGATE_RELAYER_KEY: await chain.fundedKey(),
      STABLEGATE_CHAIN: "custom",
      STABLEGATE_CHAIN_ID: String(chain.anvil.chainId),
      STABLEGATE_USDC_ADDRESS: chain.usdc,
      STABLEGATE_RPC_URL: chain.rpcUrl,
      STABLEGATE_LOG_LEVEL: "error",
      // The operator's token for /readyz's details (the leases below); Caddy's health check sends none.
      STABLEGATE_METRICS_TOKEN: TEST_METRICS_TOKEN,
    };
    for (const [name] of replicas) {
      const dataDir = makeTempDir();
      dirs.push(dataDir);
      const base = replicas.find(([n]) => n === name)![1].environment!.STABLEGATE_BASE_URL!;
      const baseUrl = base.replace(/\$\{STABLEGATE_DOMAIN[^}]*\}/, "localhost");
      processes.push(await startServeProcess({ ...env, STABLEGATE_BASE_URL: baseUrl, STABLEGATE_DATA_DIR: dataDir }));
    }
    // Caddy's part: TLS, round robin over the replicas whose /readyz answers 200.
    let next = 0;
    proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: {
        cert: readFileSync(join(import.meta.dir, "tls/localhost.pem"), "utf8"),
        key: readFileSync(join(import.meta.dir, "tls/localhost-key.pem"), "utf8"),
      },
      async fetch(req) {
        for (let tries = 0; tries < processes.length; tries++) {
          const i = next++ % processes.length;
          const upstream = processes[i]!.url;
          if (
            !(await fetch(`${upstream}/readyz`)
              .then((r) => r.ok)
              .catch(() => false))
          )
            continue;
          const url = new URL(req.url);
          servedBy.push(i);
          return fetch(upstream + url.pathname + url.search, {
            method: req.method,
            headers: req.headers,
            body: req.method === "GET" ? undefined : await req.arrayBuffer(),
          });
        }
        return new Response("no replica ready", { status: 502 });
      },
    });
  }, 120_000);

  afterAll(async () => {
    proxy?.stop(true);
    for (const proc of processes) await proc.stop();
    await chain?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test("through the TLS proxy: a payment made and read back, answered by every replica; one holds the lease", async () => {
    const account = await runCli(
      ["account", "create", "--name", "Scaled Shop", "--payout-address", `0x${"33".repeat(20)}`],
      { ...env, STABLEGATE_DATA_DIR: dirs[0]! },
    );
    expect(account.code).toBe(0);
    const apiKey = JSON.parse(account.stdout).api_key as string;
    const https = (path: string, body?: unknown) =>
      fetch(`https://localhost:${proxy!.port}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        tls: { ca: readFileSync(join(import.meta.dir, "tls/localhost.pem"), "utf8") },
      });

    const created = await https("/api/v1/payments", { amount: "12.00" });
    expect(created.status).toBe(201);
    const payment = await created.json();
    expect(payment.pay_url).toStartWith("https://localhost/pay/");
    servedBy.length = 0;
    for (let i = 0; i < 2 * processes.length; i++) {
      expect(await (await https(`/api/v1/payments/${payment.id}`)).json()).toEqual(payment);
    }
    expect(new Set(servedBy).size).toBe(processes.length);

    // What the health check sees: ready, and nothing about the relayer, its chains or leases.
    for (const p of processes) {
      const probe = await api(p.url, null)("/readyz");
      expect({ status: probe.status, body: probe.json }).toEqual({ status: 200, body: { status: "ready" } });
    }
    const held = await waitFor(
      async () => {
        const leases = await Promise.all(
          processes.map(async (p) => (await api(p.url, TEST_METRICS_TOKEN)("/readyz")).json.leases[0].held as boolean),
        );
        return leases.filter(Boolean).length === 1 && leases;
      },
      30_000,
      "one replica to hold the chain lease",
    );
    expect(held.filter(Boolean)).toHaveLength(1);
  }, 60_000);
});
