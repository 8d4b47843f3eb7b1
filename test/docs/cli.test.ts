/**
 * The command line as the docs tell it: the Commands table of docs/running.md lists every command
 * and subcommand of the CLI's own table (src/cli/commands.ts, what `--help` prints) by its full
 * name, `stablegate account set-payout`, and nothing else; and wherever README.md, ARCHITECTURE.md
 * or a page of docs/ writes a `stablegate ...` command line, it names a command or group that the
 * table has, resolved the way the CLI resolves its arguments.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Glob } from "bun";
import { COMMANDS, findCommand, GROUPS } from "../../src/cli/commands.ts";

const ROOT = resolve(import.meta.dir, "../..");
const PAGES = ["README.md", "ARCHITECTURE.md", ...[...new Glob("docs/**/*.md").scanSync(ROOT)].sort()];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");
const TABLE = COMMANDS.map((command) => command.path.join(" "));

/** The lines of a section, from its `## ` heading to the next heading of that level. */
function section(page: string, heading: string): string[] {
  const lines = read(page).split("\n");
  const start = lines.indexOf(`## ${heading}`);
  if (start === -1) return [];
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/**
 * The command names in a page's text: the lower-case words after `stablegate` ("account create"
 * of `stablegate account create --name ...`), up to the first that is not one (an option, an id,
 * a placeholder, a file name). `stablegate` counts as the program when it stands alone or ends a path in a
 * bin/ or dist/ folder, not when it is an option's value (`sudo -u stablegate`); shell comments
 * in code blocks (`# ... dist/stablegate on SQLite`) are prose about a command, not a command.
 */
function commandLines(text: string): Array<{ words: string[]; line: string }> {
  const found: Array<{ words: string[]; line: string }> = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/(^|\s)#\s.*$/, "");
    const program = /(?<=^|[\s`(|])(?:\S*\b(?:bin|dist)\/)?stablegate((?: +[a-z][a-z-]*(?![\w/-]|\.\w))+)/g;
    for (const match of line.matchAll(program)) {
      const before = line.slice(0, match.index).trimEnd().split(/\s+/).pop() ?? "";
      if (before.startsWith("-")) continue;
      found.push({ words: match[1]!.trim().split(/ +/), line: raw.trim() });
    }
  }
  return found;
}

/** Whether the CLI runs `words` as a command (or shows a group's commands) rather than refusing them. */
function resolves(words: string[]): boolean {
  try {
    findCommand(words);
    return true;
  } catch {
    return false;
  }
}

describe("the command line in the docs", () => {
  const listed = section("docs/running.md", "Commands").flatMap((line) =>
    line.startsWith("| `stablegate") ? commandLines(line.split("|")[1]!).map(({ words }) => words.join(" ")) : [],
  );

  test("the table and the pages are read (a check over nothing would pass vacuously)", () => {
    expect(TABLE.length).toBeGreaterThan(15);
    expect(listed).toContain("serve");
    expect(listed).toContain("account set-payout");
    const everywhere = PAGES.flatMap((page) => commandLines(read(page)).map(({ words }) => words.join(" ")));
    expect(everywhere).toContain("db copy");
    expect(everywhere).toContain("help account create");
    // What the reading must leave out: an option's value, a path, a comment, an id after the command.
    const sample = [
      "sudo -u stablegate sh -c 'exec /usr/local/bin/stablegate backup x.db'",
      "createdb --owner stablegate stablegate",
      "STABLEGATE_DATA_DIR=/var/lib/stablegate stablegate account create --name x",
      "bun run bench:api         # API throughput of dist/stablegate on SQLite",
      "`stablegate key revoke key_AnPA3sffdVL44acEgJN2Ce3g` or [`stablegate user create`](accounts.md)",
    ].join("\n");
    expect(commandLines(sample).map(({ words }) => words.join(" "))).toEqual([
      "backup",
      "account create",
      "key revoke",
      "user create",
    ]);
  });

  test("docs/running.md lists every command and subcommand of the CLI's table by its full name", () => {
    expect(TABLE.filter((name) => !listed.includes(name))).toEqual([]);
  });

  test("docs/running.md lists no command the table lacks, and each once", () => {
    expect(listed.filter((name) => !TABLE.includes(name))).toEqual([]);
    expect(listed).toEqual([...new Set(listed)]);
  });

  test("every command line in the docs names a command or group the CLI has", () => {
    const unknown = PAGES.flatMap((page) =>
      commandLines(read(page))
        .filter(({ words }) => !resolves(words))
        .map(({ words, line }) => `${page}: stablegate ${words.join(" ")} (in: ${line.slice(0, 120)})`),
    );
    expect(unknown).toEqual([]);
    // The resolution refuses what the CLI refuses.
    expect([["frobnicate"], ["account", "frobnicate"], ["keys", "list"]].filter(resolves)).toEqual([]);
    expect(Object.keys(GROUPS).every((group) => resolves([group]))).toBe(true);
  });
});
