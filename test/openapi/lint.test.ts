/**
 * The document the server serves at `GET /openapi.json` passes a maintained third-party linter:
 * Redocly CLI's `lint` with its `recommended` ruleset, as Redocly ships it (no redocly.yaml, no
 * rule turned off or down), reports no error and no warning. The CLI is the pinned dev dependency,
 * spawned on the served document written to a file. It runs offline: telemetry and the update
 * check are off by their documented variables, and the proxy it would send any request through is
 * a listener here that must see no connection.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runToExit } from "../support/cli.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const REDOCLY = resolve(import.meta.dir, "../../node_modules/@redocly/cli/bin/cli.js");

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "stablegate-openapi-lint-"));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location?: Array<{ pointer?: string }>;
}

/** `redocly lint --extends recommended <file> --format json`, with a proxy that counts what tries to go out. */
async function lint(file: string) {
  let connections = 0;
  const proxy = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        connections++;
        socket.end();
      },
      data() {},
    },
  });
  try {
    const proxyUrl = `http://127.0.0.1:${proxy.port}`;
    const run = await runToExit(
      [process.execPath, REDOCLY, "lint", "--extends", "recommended", "--format", "json", file],
      {
        // An empty folder and home: no redocly.yaml or user settings of anyone's can change the rules.
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          REDOCLY_TELEMETRY: "off",
          REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
          HTTPS_PROXY: proxyUrl,
          HTTP_PROXY: proxyUrl,
          NO_COLOR: "1",
        },
      },
    );
    return { ...run, connections };
  } finally {
    proxy.stop(true);
  }
}

/** Each problem on one line: its rule, severity and where, so a failure reads as the linter's report. */
function problemsOf(stdout: string): string[] {
  const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: Problem[] };
  return report.problems.map(
    (p) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer ?? "?"}: ${p.message.slice(0, 200)}`,
  );
}

describe("the served OpenAPI document, linted by Redocly CLI (recommended rules)", () => {
  test("has no error and no warning, and the linter sends nothing over the network", async () => {
    const res = await fetch(`${server.url}/openapi.json`);
    expect(res.status).toBe(200);
    const file = join(dir, "openapi.json");
    writeFileSync(file, await res.text());
    const run = await lint(file);
    expect({ code: run.code, problems: problemsOf(run.stdout), connections: run.connections }).toEqual({
      code: 0,
      problems: [],
      connections: 0,
    });
  }, 60_000);

  test("the linter does report what the recommended rules refuse (so a pass means something)", async () => {
    const res = await fetch(`${server.url}/openapi.json`);
    const doc = await res.json();
    // A webhook without its `security: []`, the first operation without its operationId, a tag without its description.
    const [path, item] = Object.entries(doc.paths as Record<string, Record<string, any>>)[0]!;
    const [method, operation] = Object.entries(item)[0]!;
    delete operation.operationId;
    delete doc.tags[0].description;
    doc.paths[path][method] = operation;
    delete doc.webhooks.test.post.security;
    const file = join(dir, "broken.json");
    writeFileSync(file, JSON.stringify(doc));
    const run = await lint(file);
    const rules = problemsOf(run.stdout).map((line) => line.split(" ").slice(0, 2).join(" "));
    expect({ code: run.code, rules: [...new Set(rules)].sort(), connections: run.connections }).toEqual({
      code: 1,
      rules: ["error security-defined", "warn operation-operationId", "warn tag-description"],
      connections: 0,
    });
  }, 60_000);
});
