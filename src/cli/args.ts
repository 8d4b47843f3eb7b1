import { parseArgs as parseStrict } from "node:util";

/**
 * The flags a command takes: each is `--name value` (or `--name=value`) unless boolean; a
 * `multiple` one may be given again, each value kept in order (`--address-line` twice).
 */
export type FlagSpec = Record<string, { type: "string" | "boolean"; multiple?: boolean }>;

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | boolean | string[]>;
}

/**
 * Parses one command's arguments strictly: an unknown flag, a flag without its value, or more
 * positionals than `maxPositionals` is a usage mistake, never silently ignored (a mistyped
 * `--acount` must not widen `key list` to every account).
 */
export function parseArgs(argv: string[], flags: FlagSpec, maxPositionals: number): ParsedArgs {
  let parsed: ReturnType<typeof parseStrict>;
  try {
    parsed = parseStrict({ args: argv, options: flags, strict: true, allowPositionals: true });
  } catch (error) {
    // node's messages run on with advice about `--`; the first sentence says what is wrong.
    const first = (error as Error).message.split("\n")[0]!.split(". ")[0]!.replace(/\.$/, "");
    throw new UsageError(first.charAt(0).toLowerCase() + first.slice(1));
  }
  if (parsed.positionals.length > maxPositionals)
    throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"`);
  const values = new Map<string, string | boolean | string[]>();
  for (const [name, value] of Object.entries(parsed.values))
    if (typeof value === "string" || typeof value === "boolean") values.set(name, value);
    else if (Array.isArray(value)) values.set(name, value.map(String));
  return { positionals: parsed.positionals, flags: values };
}

/** A usage mistake: printed as one line with a pointer to --help, exit code 2. */
export class UsageError extends Error {}
