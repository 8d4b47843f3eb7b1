/** A `stablegate` command as a real child process (`bun src/main.ts ...`), run to its exit. */
import { childEnv, MAIN } from "./serve-process.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `stablegate <args>` with `env` (no STABLEGATE_* of the parent's) and, if given, `stdin`. */
export async function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: childEnv(env),
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}
