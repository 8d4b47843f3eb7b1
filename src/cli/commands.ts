/**
 * Every `stablegate` command in one table: what `main.ts` dispatches and what `--help` prints.
 * A command missing here cannot be run, so none runs without its help page. Handlers import
 * their modules on use: the server's and the database's modules take most of a short command's
 * start-up, and `--help` must not load them at all.
 */
import pkg from "../../package.json" with { type: "json" };
import { UsageError } from "./args.ts";

type Env = Record<string, string | undefined>;

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

/** Words with commands under them and nothing of their own to run: `stablegate account ...`. */
export const GROUPS: Record<string, string> = {
  account: "merchant accounts, where their payments pay out and how fast they count",
  key: "the API keys of merchant accounts",
  user: "the dashboard's users",
  email: "outgoing email: a test, and an account's emails to its customers",
  db: "the database itself",
};

const STORE =
  "Works on the store of STABLEGATE_DATA_DIR (default ./stablegate-data), or PostgreSQL with " +
  "STABLEGATE_DATABASE_URL, while the server runs; prints JSON.";
const PAYMENT_ID = "0x4f1d2c3b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff001";
const ACCOUNT_ID = ["--account ACCOUNT_ID", "the account (acct_...)"] satisfies [string, string];

function printJson(value: unknown, indent = 2): number {
  console.log(JSON.stringify(value, null, indent));
  return 0;
}

function accountCommand(group: "account" | "key", action: string) {
  return async (args: string[], env: Env) => {
    const { runAccountCommand } = await import("./accounts.ts");
    return printJson(await runAccountCommand(group, [action, ...args], env));
  };
}

function userCommand(action: string) {
  return async (args: string[], env: Env) => {
    const { runUserCommand } = await import("./users.ts");
    return printJson(await runUserCommand([action, ...args], env));
  };
}

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
  {
    path: ["account", "create"],
    summary: "a new account and its first API key",
    usage: ["stablegate account create --name NAME --payout-address ADDRESS [--fee-bps N]"],
    options: [
      ["--name NAME", "the account's name, 1 to 200 characters"],
      [
        "--payout-address ADDRESS",
        "where its payments pay out: a mixed-case address must carry a valid EIP-55 checksum; an all " +
          "lower-case one is stored checksummed",
      ],
      [
        "--fee-bps N",
        "its own platform fee, 0 to 10000 basis points, instead of STABLEGATE_FEE_BPS; above 0 needs " +
          "STABLEGATE_FEE_RECIPIENT",
      ],
    ],
    notes: [
      "Prints the account and its first API key. The key is shown only this once: only its hash is stored.",
      STORE,
    ],
    examples: [
      'stablegate account create --name "Acme Coffee" --payout-address 0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    ],
    run: accountCommand("account", "create"),
  },
  {
    path: ["account", "list"],
    summary: "every account, with its payout address, fee and speed",
    usage: ["stablegate account list"],
    options: [],
    notes: [STORE],
    examples: ["stablegate account list"],
    run: accountCommand("account", "list"),
  },
  {
    path: ["account", "show"],
    summary: "one account, with its payout address, fee and speed",
    usage: ["stablegate account show ACCOUNT_ID"],
    options: [],
    notes: [STORE],
    examples: ["stablegate account show acct_hs1BYHqNmEQDzhVF4Tf5NR5U"],
    run: accountCommand("account", "show"),
  },
  {
    path: ["account", "set-payout"],
    summary: "where new payments pay out (recorded as an event)",
    usage: ["stablegate account set-payout ACCOUNT_ID ADDRESS"],
    options: [],
    notes: [
      "ADDRESS has the checks of account create. Payments created before keep the old address, which is " +
        "committed in their deposit address. The change is recorded as an account.updated event.",
      STORE,
    ],
    examples: [
      "stablegate account set-payout acct_hs1BYHqNmEQDzhVF4Tf5NR5U 0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
    ],
    run: accountCommand("account", "set-payout"),
  },
  {
    path: ["account", "set-speed"],
    summary: "how deep a transfer must be before it counts",
    usage: ["stablegate account set-speed ACCOUNT_ID fast|standard|final|default"],
    options: [],
    notes: [
      "The speed policy of the account's new payments (docs/speed.md): fast counts a transfer once it is in " +
        "a block (seconds, but a reorg can take it back), standard once it has the chain's confirmations, " +
        "final once the chain calls its block final (minutes). default follows the server's STABLEGATE_SPEED " +
        "again. A payment keeps the policy it was created with, and a request's own speed overrides it.",
      "Prints the account: speed is the policy in effect, speed_source says whether it is the account's own " +
        "(account) or STABLEGATE_SPEED's (server), read from this command's environment.",
      STORE,
    ],
    examples: ["stablegate account set-speed acct_hs1BYHqNmEQDzhVF4Tf5NR5U fast"],
    run: accountCommand("account", "set-speed"),
  },
  {
    path: ["account", "set-business"],
    summary: "the business details printed on invoices and receipts",
    usage: ["stablegate account set-business ACCOUNT_ID --FIELD VALUE [--FIELD VALUE]..."],
    options: [
      ["--legal-name NAME", "shown instead of the account's name on invoices, receipts and the checkout's documents"],
      ["--address-line LINE", "one line of the address; give it once per line, up to 6 (replaces every line)"],
      ["--tax-id ID", "the tax or VAT number to print"],
      ["--support-email EMAIL", "where customers write with questions, shown on the documents"],
    ],
    notes: [
      "Changes only the fields given; an empty value (--tax-id '') clears one. Every value is checked first: " +
        "one bad value changes nothing. Each --FIELD is one of the options below. The logo is uploaded " +
        "from the dashboard's settings page. See " +
        "docs/documents.md.",
      STORE,
    ],
    examples: [
      'stablegate account set-business acct_hs1BYHqNmEQDzhVF4Tf5NR5U --legal-name "Acme Coffee GmbH" ' +
        '--address-line "Kastanienallee 12" --address-line "10435 Berlin, Germany" --tax-id DE123456789 ' +
        "--support-email help@acme.example",
    ],
    run: accountCommand("account", "set-business"),
  },
  {
    path: ["key", "create"],
    summary: "a new API key for an account",
    usage: ["stablegate key create --account ACCOUNT_ID"],
    options: [ACCOUNT_ID],
    notes: [
      "The key is printed only this once: only its hash is stored. To rotate: create a key, deploy it, " +
        "revoke the old one.",
      STORE,
    ],
    examples: ["stablegate key create --account acct_hs1BYHqNmEQDzhVF4Tf5NR5U"],
    run: accountCommand("key", "create"),
  },
  {
    path: ["key", "list"],
    summary: "API keys, with their hint and when each was last used",
    usage: ["stablegate key list [--account ACCOUNT_ID]"],
    options: [["--account ACCOUNT_ID", "only this account's keys (default: every account's)"]],
    notes: [STORE],
    examples: ["stablegate key list --account acct_hs1BYHqNmEQDzhVF4Tf5NR5U"],
    run: accountCommand("key", "list"),
  },
  {
    path: ["key", "revoke"],
    summary: "revoke a key: it is refused from the next request on",
    usage: ["stablegate key revoke KEY_ID"],
    options: [],
    notes: [STORE],
    examples: ["stablegate key revoke key_AnPA3sffdVL44acEgJN2Ce3g"],
    run: accountCommand("key", "revoke"),
  },
  {
    path: ["user", "create"],
    summary: "a dashboard user of an account, and its password",
    usage: ["stablegate user create --account ACCOUNT_ID --email EMAIL [--password-stdin]"],
    options: [
      ACCOUNT_ID,
      ["--email EMAIL", "the user's email, one user per email on the server"],
      ["--password-stdin", "the first line of standard input as the password (12 to 256 characters), not a new one"],
    ],
    notes: [
      "Prints the user and its password, generated unless --password-stdin, only this once: only its hash " +
        "is stored.",
      STORE,
    ],
    examples: [
      "stablegate user create --account acct_hs1BYHqNmEQDzhVF4Tf5NR5U --email owner@acme.example",
      "printf '%s\\n' 'a passphrase of my own' | stablegate user create --account acct_hs1BYHqNmEQDzhVF4Tf5NR5U " +
        "--email till@acme.example --password-stdin",
    ],
    run: userCommand("create"),
  },
  {
    path: ["user", "list"],
    summary: "dashboard users (no passwords)",
    usage: ["stablegate user list [--account ACCOUNT_ID]"],
    options: [["--account ACCOUNT_ID", "only this account's users (default: every account's)"]],
    notes: [STORE],
    examples: ["stablegate user list --account acct_hs1BYHqNmEQDzhVF4Tf5NR5U"],
    run: userCommand("list"),
  },
  {
    path: ["user", "reset-password"],
    summary: "a new password for a user; ends the user's sessions",
    usage: ["stablegate user reset-password USER_ID [--password-stdin]"],
    options: [
      ["--password-stdin", "the first line of standard input as the password (12 to 256 characters), not a new one"],
    ],
    notes: [STORE],
    examples: ["stablegate user reset-password usr_Qm3vN8xYp2LkTz7WbR4sHd9c"],
    run: userCommand("reset-password"),
  },
  {
    path: ["user", "delete"],
    summary: "delete a user; ends the user's sessions",
    usage: ["stablegate user delete USER_ID"],
    options: [],
    notes: [STORE],
    examples: ["stablegate user delete usr_Qm3vN8xYp2LkTz7WbR4sHd9c"],
    run: userCommand("delete"),
  },
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
