/** Minimal flag parsing for the CLI: `--name value` or `--name=value`, plus positionals. */
export function parseArgs(argv: string[]): { positionals: string[]; flags: Map<string, string> } {
  const positionals: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("--")) flags.set(arg.slice(2), argv[++i]!);
    else flags.set(arg.slice(2), "true");
  }
  return { positionals, flags };
}

/** A usage mistake: printed as one line with a pointer to --help, exit code 2. */
export class UsageError extends Error {}
