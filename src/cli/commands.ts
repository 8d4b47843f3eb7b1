/**
 * Every `stablegate` command in one table: what `main.ts` dispatches and what `--help` prints.
 * A command missing here cannot be run, so none runs without its help page. Handlers import
 * their modules on use: the server's and the database's modules take most of a short command's
 * start-up, and `--help` must not load them at all.
 */
import pkg from "../../package.json" with { type: "json" };
import { ACCOUNT_COMMANDS } from "./account-commands.ts";
import { UsageError } from "./args.ts";
import { ACCOUNT_ID, type Command, printJson, STORE } from "./command.ts";

/** Words with commands under them and nothing of their own to run: `stablegate account ...`. */
export const GROUPS: Record<string, string> = {
  account: "merchant accounts, where their payments pay out and how fast they count",
  key: "the API keys of merchant accounts",
  user: "the dashboard's users",
  email: "outgoing email: a test, and an account's emails to its customers",
  db: "the database itself",
};

const PAYMENT_ID = "0x4f1d2c3b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff001";

export const COMMANDS: Command[] = [
  {
    path: ["serve"],
    summary: "run the API, checkout, dashboard and background loops",
    usage: ["stablegate serve"],
    options: [],
    notes: [
      "Configuration comes from STABLEGATE_* environment variables (docs/configuration.md); a missing " +
        "or bad value exits 78 with one line naming it. One serve runs per data directory. It runs until " +
        "SIGTERM or SIGINT, then stops its loops and its listener.",
    ],
    examples: ["STABLEGATE_DATA_DIR=/var/lib/stablegate STABLEGATE_CHAIN=base-sepolia stablegate serve"],
    async run(_args, env) {
      const { runServe } = await import("./serve.ts");
      return runServe(env);
    },
  },
  {
    path: ["dev"],
    summary: "local chain + server + account, for trying it out",
    usage: ["stablegate dev"],
    options: [],
    notes: [
      "Starts anvil on port 8545 with a test USDC and the deposit contracts, a second chain " +
        "(local-source, port 8546) with a local CCTP rig, the server on http://localhost:8080, an account, " +
        "a dashboard user and a paid example payment, and prints the API key, the user's password and " +
        "commands to try. Data goes to STABLEGATE_DATA_DIR, else to a new temporary directory. Ctrl-C " +
        "stops everything.",
    ],
    examples: ["stablegate dev", "STABLEGATE_DATA_DIR=./dev-data stablegate dev   # keeps its data for the next run"],
    async run(args, env) {
      const { runDev } = await import("./dev.ts");
      return runDev(args, env);
    },
  },
  {
    path: ["dev", "pay"],
    summary: "pay a payment from the funded dev wallet",
    usage: [
      "stablegate dev pay <payment_id> [amount]",
      "stablegate dev pay <payment_id> [amount] --chain NAME",
      "stablegate dev pay <payment_id> --cross-chain",
    ],
    options: [
      ["--chain NAME", "pay with a plain USDC transfer on that dev chain: local-source, or the settlement chain"],
      ["--cross-chain", "burn on local-source and have it minted here through CCTP (not with --chain)"],
    ],
    notes: [
      "amount is in USDC, up to 6 decimals (default: what the payment still needs). Run it in the folder " +
        "where `stablegate dev` runs. Prints the transaction as JSON.",
    ],
    examples: [
      `stablegate dev pay ${PAYMENT_ID} 12.50`,
      `stablegate dev pay ${PAYMENT_ID} --chain local-source`,
      `stablegate dev pay ${PAYMENT_ID} --cross-chain`,
    ],
    async run(args, env) {
      const { runDev } = await import("./dev.ts");
      return runDev(["pay", ...args], env);
    },
  },
  ...ACCOUNT_COMMANDS,
  {
    path: ["email", "test"],
    summary: "send a test email now through the configured SMTP server",
    usage: ["stablegate email test ADDRESS"],
    options: [],
    notes: [
      "Reads STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM (exit 78 when they are unset or bad), sends one " +
        "email to ADDRESS at once, with no server running, and prints JSON with what the SMTP server " +
        "answered: exit 0 when it accepted the email, 1 when it did not. The password is never printed.",
    ],
    examples: [
      "stablegate email test me@acme.example",
      "STABLEGATE_SMTP_URL=smtps://user:pass@mail.example.com STABLEGATE_SMTP_FROM=billing@acme.example " +
        "stablegate email test me@acme.example",
    ],
    async run(args, env) {
      const { runEmailTest } = await import("./email.ts");
      const { code, out } = await runEmailTest(args, env);
      printJson(out);
      return code;
    },
  },
  {
    path: ["email", "customers"],
    summary: "turn an account's emails to its customers on or off",
    usage: ["stablegate email customers on|off --account ACCOUNT_ID"],
    options: [ACCOUNT_ID],
    notes: [
      "Customer emails (invoices, receipts, underpayment notices, refund claim links) are on for every " +
        "account once email is configured; this turns them off or on again. The dashboard's settings page " +
        "has the same switch.",
      STORE,
    ],
    examples: ["stablegate email customers off --account acct_hs1BYHqNmEQDzhVF4Tf5NR5U"],
    async run(args, env) {
      const { runEmailCustomers } = await import("./email.ts");
      return printJson(await runEmailCustomers(args, env));
    },
  },
  {
    path: ["backup"],
    summary: "a consistent copy of the database, safe while serve runs",
    usage: ["stablegate backup FILE [--force]"],
    options: [["--force", "replace FILE if it exists (without it, an existing FILE is refused)"]],
    notes: [
      "Copies the SQLite store of STABLEGATE_DATA_DIR (default ./stablegate-data) to FILE, readable by its " +
        "owner only (0600), and prints JSON. With " +
        "STABLEGATE_DATABASE_URL set it refuses (exit 78): back up PostgreSQL with pg_dump or a replica.",
    ],
    examples: ["stablegate backup /var/backups/stablegate/stablegate-$(date -u +%Y%m%dT%H%M%SZ).db"],
    async run(args, env) {
      const { runBackup } = await import("./backup.ts");
      return printJson(runBackup(args, env), 0);
    },
  },
  {
    path: ["db", "copy"],
    summary: "copy the SQLite store into an empty PostgreSQL database",
    usage: ["stablegate db copy [--to postgres://...]"],
    options: [
      [
        "--to URL",
        "the empty target database (default: STABLEGATE_DATABASE_URL, which keeps the password out of the " +
          "process list)",
      ],
    ],
    notes: [
      "Stop the server first. Copies the store of STABLEGATE_DATA_DIR (default ./stablegate-data) and " +
        "prints the rows copied per table, each checked equal in the target.",
    ],
    examples: ["STABLEGATE_DATA_DIR=/var/lib/stablegate STABLEGATE_DATABASE_URL='postgres://...' stablegate db copy"],
    async run(args, env) {
      const { runDbCommand } = await import("./db.ts");
      return printJson(await runDbCommand(["copy", ...args], env));
    },
  },
  {
    path: ["listen"],
    summary:
      "forward a server's events to a local URL, signed; the API key from STABLEGATE_API_KEY or standard " +
      "input, never an argument",
    usage: ["stablegate listen --url URL --forward-to LOCAL_URL [--events TYPE,TYPE] [--key-stdin]"],
    options: [
      ["--url URL", "the server to follow: https://, or http:// only to localhost, 127.0.0.0/8 or [::1]"],
      ["--forward-to LOCAL_URL", "where each event is POSTed, signed as a webhook delivery (http:// is fine)"],
      ["--events TYPE,TYPE", "forward only these event types (default: all)"],
      ["--key-stdin", "read the API key from the first line of standard input"],
    ],
    notes: [
      "The API key comes from STABLEGATE_API_KEY, or from standard input with --key-stdin or when standard " +
        "input is piped; never from an argument, which ps and shell history would keep (--key is refused).",
      "Prints a new whsec_ signing secret first, for the handler, then one line per event with the local " +
        "answer; a payment's or refund's line also names it, its amount and status (and a refund's payment). " +
        "Runs until Ctrl-C.",
    ],
    examples: [
      "stablegate listen --url https://pay.example.com --forward-to http://localhost:3000/webhooks " +
        "--events payment.confirmed,payment.failed,refund.payable,refund.succeeded",
    ],
    async run(args, env) {
      const { runListen } = await import("./listen.ts");
      return runListen(args, env);
    },
  },
  {
    path: ["version"],
    summary: "print the version (as --version)",
    usage: ["stablegate version"],
    options: [],
    notes: [],
    examples: ["stablegate version"],
    async run() {
      console.log(pkg.version);
      return 0;
    },
  },
  {
    path: ["help"],
    summary: "this overview, or a command's page (as COMMAND --help)",
    usage: ["stablegate help [COMMAND]"],
    options: [],
    notes: [],
    examples: ["stablegate help account create"],
    async run(args) {
      const { helpFor } = await import("./help.ts");
      console.log(helpFor(args));
      return 0;
    },
  },
];

export type Target = { command: Command; args: string[] } | { group: string; args: string[] };

/**
 * The command (the longest path `argv` starts with) or the group `argv` names, and the arguments
 * after it. An unknown command is a usage mistake; a group followed by a word that is none of its
 * commands is one too.
 */
export function findCommand(argv: string[]): Target {
  let found: Command | undefined;
  for (const command of COMMANDS)
    if (command.path.every((word, i) => argv[i] === word) && command.path.length > (found?.path.length ?? 0))
      found = command;
  if (found) return { command: found, args: argv.slice(found.path.length) };
  const [group, action] = argv;
  if (group === undefined || !Object.hasOwn(GROUPS, group)) throw new UsageError(`unknown command "${group}"`);
  if (action !== undefined && !action.startsWith("-")) throw new UsageError(`unknown command: ${group} ${action}`);
  return { group, args: argv.slice(1) };
}

/** The commands under `group` (a group or a command such as `dev`), in table order. */
export function commandsUnder(group: string): Command[] {
  return COMMANDS.filter((command) => command.path.length === 2 && command.path[0] === group);
}

/**
 * Whether the arguments ask for help: `--help` or `-h` anywhere before a `--`, so that
 * `stablegate account create --name x --help` prints the page rather than creating anything.
 */
export function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}
