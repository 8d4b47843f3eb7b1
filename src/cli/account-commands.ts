/**
 * The commands of merchant accounts, their API keys and the dashboard's users, in the order
 * `--help` lists them; part of the table in src/cli/commands.ts.
 */
import { ACCOUNT_ID, type Command, type Env, printJson, STORE } from "./command.ts";

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

export const ACCOUNT_COMMANDS: Command[] = [
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
];
