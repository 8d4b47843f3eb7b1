/** Commands as real child processes, run to their exit: `stablegate` itself (`bun src/main.ts ...`) or any other. */
import { childEnv, MAIN } from "./serve-process.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Written to the child's stdin, which is closed after it; none by default. */
  stdin?: string;
  /** Killed (SIGKILL) when it has not exited by then; waits as long as it takes by default. */
  deadlineMs?: number;
}

/** Runs `command` with exactly `env` until it exits, and collects what it printed. */
export async function runToExit(
  command: string[],
  { env, cwd, stdin, deadlineMs }: RunOptions,
): Promise<CliResult & { timedOut: boolean }> {
  const proc = Bun.spawn(command, {
    cwd,
    env,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = deadlineMs === undefined ? undefined : setTimeout(() => proc.kill("SIGKILL"), deadlineMs);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { code, stdout, stderr, timedOut: proc.signalCode === "SIGKILL" };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `stablegate <args>` with `env` (no STABLEGATE_* of the parent's) and, if given, `stdin`. */
export async function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  const { code, stdout, stderr } = await runToExit([process.execPath, MAIN, ...args], { env: childEnv(env), stdin });
  return { code, stdout, stderr };
}
