/** The help text of `stablegate`, written from the command table so the two cannot drift apart. */
import pkg from "../../package.json" with { type: "json" };
import type { Command } from "./command.ts";
import { COMMANDS, commandsUnder, findCommand, GROUPS, type Target } from "./commands.ts";

/** Lines stay within this many columns (a long example command excepted), for a 100-column terminal. */
const WIDTH = 100;
/** Where the overview's summaries start (a usage line that reaches it puts its summary below). */
const SUMMARY_COLUMN = 44;
const HELP_OPTION: [string, string] = ["-h, --help", "print this help and exit"];

/** What `stablegate help WORDS...` prints: the overview for no words, else that command's or group's page. */
export function helpFor(words: string[]): string {
  return words.length === 0 ? overview() : helpPage(findCommand(words));
}

export function helpPage(target: Target): string {
  return "command" in target ? commandPage(target.command) : groupPage(target.group);
}

/** `stablegate --help`: every command's usage lines, each command's summary beside its first. */
export function overview(): string {
  return [
    `stablegate ${pkg.version}: self-hosted USDC payment server`,
    "",
    "Usage:",
    ...columns(COMMANDS.flatMap(usageRows), SUMMARY_COLUMN),
    "",
    "Options:",
    ...columns([HELP_OPTION, ["--version", "print the version and exit"]], SUMMARY_COLUMN),
    "",
    "Run `stablegate COMMAND --help` (or -h) for a command's options and examples.",
    "Configuration comes from STABLEGATE_* environment variables (see docs/configuration.md).",
    "Account, key, user and backup commands print JSON and work while the server runs.",
    "Exit codes: 2 usage mistake, 78 configuration error, 1 anything else.",
    "",
    "Examples:",
    ...columns(
      [
        ["stablegate dev", "try it out on a local chain"],
        ["stablegate account create --help", "the options of account create, and an example"],
      ],
      SUMMARY_COLUMN,
    ),
  ].join("\n");
}

function commandPage(command: Command): string {
  const name = `stablegate ${command.path.join(" ")}`;
  const under = command.path.length === 1 ? commandsUnder(command.path[0]!) : [];
  const options = [...command.options, HELP_OPTION];
  return [
    ...wrap(`${name}: ${command.summary}`, WIDTH),
    "",
    "Usage:",
    ...command.usage.map((line) => `  ${line}`),
    "",
    "Options:",
    ...columns(options, optionColumn(options)),
    ...(under.length > 0 ? ["", "Commands:", ...columns(under.flatMap(usageRows), SUMMARY_COLUMN)] : []),
    ...command.notes.flatMap((note) => ["", ...wrap(note, WIDTH)]),
    "",
    command.examples.length > 1 ? "Examples:" : "Example:",
    ...command.examples.flatMap(commandLine),
  ].join("\n");
}

function groupPage(group: string): string {
  const under = commandsUnder(group);
  return [
    `stablegate ${group}: ${GROUPS[group]}`,
    "",
    "Usage:",
    ...columns(under.flatMap(usageRows), SUMMARY_COLUMN),
    "",
    "Options:",
    ...columns([HELP_OPTION], optionColumn([HELP_OPTION])),
    "",
    `Run \`stablegate ${group} COMMAND --help\` for a command's options and examples.`,
    "",
    "Examples:",
    ...under.flatMap((command) => commandLine(command.examples[0]!)),
  ].join("\n");
}

/** A command's usage lines, its summary beside the first. */
function usageRows(command: Command): Array<[string, string]> {
  return command.usage.map((line, i) => [line, i === 0 ? command.summary : ""]);
}

/** Past the longest option, within reason: a very long one puts its description below it. */
function optionColumn(options: Array<[string, string]>): number {
  return Math.min(30, 4 + Math.max(...options.map(([flag]) => flag.length)));
}

/** Two columns, the right one wrapped; a left cell too wide for its column stands on its own line. */
function columns(rows: Array<[string, string]>, column: number): string[] {
  const indent = " ".repeat(column);
  return rows.flatMap(([left, right]) => {
    if (!right) return [`  ${left}`];
    const [first, ...rest] = wrap(right, WIDTH - column);
    const more = rest.map((line) => indent + line);
    return left.length + 4 <= column
      ? [`  ${left.padEnd(column - 2)}${first}`, ...more]
      : [`  ${left}`, indent + first, ...more];
  });
}

/** An example command line, broken before its options with ` \\` where it would run past WIDTH. */
function commandLine(example: string): string[] {
  const [head, ...options] = example.split(/ (?=--)/);
  const lines = [`  ${head}`];
  for (const option of options) {
    const last = lines.length - 1;
    if (`${lines[last]} ${option} \\`.length > WIDTH) lines.splice(last, 1, `${lines[last]} \\`, `      ${option}`);
    else lines[last] += ` ${option}`;
  }
  return lines;
}

/** `text` in lines of at most `width` characters, broken between words. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}
