/**
 * `stablegate serve` as a real child process (`bun src/main.ts serve`), for what only a process
 * shows: exit codes, signals, kill -9, several servers racing for one data directory. The one way
 * tests start one, so every such test gets the same environment, start-up wait and error.
 *
 *   const server = spawnServe({ ...testEnv(dir), STABLEGATE_PORT: String(port) });
 *   await server.listening();  // or: await server.exited for one that must refuse to start
 *   await server.stop();
 *
 * or, on a free port and already listening: `const server = await startServeProcess(testEnv(dir))`.
 */
import { resolve } from "node:path";
import { freePort } from "../../src/lib/free-port.ts";
import { drainTail } from "../../src/lib/stream-tail.ts";
import { waitFor } from "./wait.ts";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
export const MAIN = resolve(REPO_ROOT, "src/main.ts");

/** The parent's environment without any STABLEGATE_* of its own, plus `extra`. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("STABLEGATE_") && v !== undefined) env[k] = v;
  return { ...env, ...extra };
}

export interface ServeProcess {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Where it listens: 127.0.0.1 and STABLEGATE_PORT from the env. */
  url: string;
  exited: Promise<number>;
  /** Resolves once /healthz answers; throws with the stderr tail if the process exits first. */
  listening(timeoutMs?: number): Promise<void>;
  stdout(): Promise<string>;
  stderr(): Promise<string>;
  /** SIGKILL if still running, then waits for the exit. */
  stop(): Promise<void>;
}

/** Starts `command` (default `bun src/main.ts serve`) with `env`; does not wait for it. */
export function spawnServe(env: Record<string, string>, opts: { command?: string[] } = {}): ServeProcess {
  const proc = Bun.spawn(opts.command ?? [process.execPath, MAIN, "serve"], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // Both read as they come: a full pipe would block the server.
  const stdout = drainTail(proc.stdout);
  const stderr = drainTail(proc.stderr);
  const url = `http://127.0.0.1:${env.STABLEGATE_PORT}`;
  return {
    proc,
    url,
    exited: proc.exited,
    async listening(timeoutMs = 20_000) {
      await waitFor(
        async () => proc.exitCode !== null || (await fetch(`${url}/healthz`)).ok,
        timeoutMs,
        `serve to listen on ${url}`,
      );
      if (proc.exitCode !== null) throw new Error(`serve exited with ${proc.exitCode}: ${(await stderr()).trim()}`);
    },
    stdout,
    stderr,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/**
 * spawnServe on a free loopback port (and that port's base URL unless `env` names one), resolved
 * once it listens; a server that exits or stays silent for 20 s is killed and the error carries
 * its stderr.
 */
export async function startServeProcess(
  env: Record<string, string>,
  opts: { command?: string[] } = {},
): Promise<ServeProcess> {
  // A free port can be taken by another process between the probe and the server's bind (tests
  // run side by side): then the server says so and exits, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const port = String(await freePort());
    const server = spawnServe(
      { STABLEGATE_BASE_URL: `http://127.0.0.1:${port}`, ...env, STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: port },
      opts,
    );
    try {
      await server.listening();
      return server;
    } catch (error) {
      await server.stop();
      if (attempt < 3 && String(error).includes("the port is in use")) continue;
      throw error;
    }
  }
}
