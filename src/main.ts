#!/usr/bin/env bun
import { UsageError } from "./cli/args.ts";
import { asksForHelp, commandsUnder, findCommand } from "./cli/commands.ts";
import { helpPage, overview } from "./cli/help.ts";
import { ConfigError, DomainError } from "./lib/errors.ts";

/**
 * Runs the command `argv` names from the command table (src/cli/commands.ts). Help is answered
 * before anything else: no configuration read, no data directory created, no port bound.
 */
async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === "--help" || first === "-h") {
    console.log(overview());
    return 0;
  }
  const target = findCommand(first === "--version" ? ["version", ...argv.slice(1)] : argv);
  if (asksForHelp(target.args)) {
    console.log(helpPage(target));
    return 0;
  }
  if ("group" in target) {
    const usage = commandsUnder(target.group).flatMap((command) => command.usage);
    throw new UsageError(`usage: ${usage.join(" | ")}`);
  }
  return target.command.run(target.args, process.env);
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
