/**
 * What a `stablegate` command is (src/cli/commands.ts has the table of them), and the pieces
 * their help pages and handlers share.
 */
export type Env = Record<string, string | undefined>;

export interface Command {
  /** The words that name it: ["account", "create"]. */
  path: string[];
  /** One line, for the overview. */
  summary: string;
  /** Its usage lines, each a whole command line from `stablegate` on. */
  usage: string[];
  /** Each option as it is written (`--name NAME`) and what it does. */
  options: Array<[string, string]>;
  /** Paragraphs for its help page: what it reads, prints and refuses. */
  notes: string[];
  examples: string[];
  /** Runs it with the arguments after its path; resolves to the exit code. */
  run(args: string[], env: Env): Promise<number>;
}

/** The note of every command that works on the store. */
export const STORE =
  "Works on the store of STABLEGATE_DATA_DIR (default ./stablegate-data), or PostgreSQL with " +
  "STABLEGATE_DATABASE_URL, while the server runs; prints JSON.";
export const ACCOUNT_ID = ["--account ACCOUNT_ID", "the account (acct_...)"] satisfies [string, string];

export function printJson(value: unknown, indent = 2): number {
  console.log(JSON.stringify(value, null, indent));
  return 0;
}
