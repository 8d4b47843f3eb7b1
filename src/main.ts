#!/usr/bin/env bun
import pkg from "../package.json" with { type: "json" };
import { runAccountCommand } from "./cli/accounts.ts";
import { UsageError } from "./cli/args.ts";
import { runBackup } from "./cli/backup.ts";
import { runUserCommand } from "./cli/users.ts";
import { ConfigError, DomainError } from "./lib/errors.ts";

const HELP = `stablegate ${pkg.version}: self-hosted USDC payment server

Usage:
  stablegate serve                          run the API, checkout and background loops
  stablegate dev                            local chain + server + account, for trying it out
  stablegate dev pay <payment_id> [amount]  pay a payment from the funded dev wallet
  stablegate dev pay <payment_id> [amount] --chain NAME
                                            the same as a plain transfer on that dev chain (local-source)
  stablegate dev pay <payment_id> --cross-chain
                                            pay it through CCTP from the dev source chain
  stablegate account create --name NAME --payout-address 0x.. [--fee-bps N]
  stablegate account list
  stablegate account show ACCOUNT_ID
  stablegate account set-payout ACCOUNT_ID ADDRESS
                                            where new payments pay out (recorded as an event)
  stablegate key create --account ACCOUNT_ID
  stablegate key list [--account ACCOUNT_ID]
  stablegate key revoke KEY_ID
  stablegate user create --account ACCOUNT_ID --email EMAIL [--password-stdin]
  stablegate user list [--account ACCOUNT_ID]
  stablegate user reset-password USER_ID [--password-stdin]
  stablegate user delete USER_ID
  stablegate backup FILE [--force]          a consistent copy of the database (0600), safe while
                                            serve runs; --force replaces an existing FILE
  stablegate db copy [--to postgres://..]   copy the SQLite store into an empty PostgreSQL database
                                            (default: STABLEGATE_DATABASE_URL); stop serve first
  stablegate listen --url URL --forward-to LOCAL_URL [--events TYPE,TYPE] [--key-stdin]
                                            forward a server's events to a local URL, signed; the
                                            key from STABLEGATE_API_KEY or standard input (never an
                                            argument); --url is https:// (http:// only to loopback)
  stablegate version

Configuration comes from STABLEGATE_* environment variables (see README.md).
Account, key, user and backup commands print JSON and work while the server runs.
Exit codes: 2 usage mistake, 78 configuration error, 1 anything else.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve": {
      // Imported on use, as the other heavy commands are: the server's modules take most of a
      // short command's start-up.
      const { runServe } = await import("./cli/serve.ts");
      return runServe(process.env);
    }
    case "dev": {
      const { runDev } = await import("./cli/dev.ts");
      return runDev(rest, process.env);
    }
    case "account":
    case "key":
      console.log(JSON.stringify(runAccountCommand(command, rest, process.env), null, 2));
      return 0;
    case "user":
      console.log(JSON.stringify(await runUserCommand(rest, process.env), null, 2));
      return 0;
    case "backup":
      console.log(JSON.stringify(runBackup(rest, process.env)));
      return 0;
    case "db": {
      const { runDbCommand } = await import("./cli/db.ts");
      console.log(JSON.stringify(runDbCommand(rest, process.env), null, 2));
      return 0;
    }
    case "listen": {
      const { runListen } = await import("./cli/listen.ts");
      return runListen(rest, process.env);
    }
    case "version":
    case "--version":
      console.log(pkg.version);
      return 0;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(HELP);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`stablegate: ${error.message} (see stablegate --help)`);
    process.exitCode = 2;
  } else if (error instanceof ConfigError || error instanceof DomainError) {
    console.error(`stablegate: ${error.message}`);
    process.exitCode = error instanceof ConfigError ? 78 : 1;
  } else {
    console.error(`stablegate: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
