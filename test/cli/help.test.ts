/**
 * Every command of the CLI's own table answers `--help` and `-h` from the real binary's entry
 * point with its usage, options and an example, exit 0, and does none of its work: nothing is
 * created in the working directory or at STABLEGATE_DATA_DIR, and the process ends by itself (a
 * `serve` or `dev` that started would not). The table covers every command `main.ts` runs.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Glob } from "bun";
import { COMMANDS, commandsUnder, GROUPS } from "../../src/cli/commands.ts";
import { runToExit } from "../support/cli.ts";
import { childEnv, MAIN, REPO_ROOT } from "../support/serve-process.ts";

/** Far more than a help page takes on a loaded machine; a command doing its work runs on past it. */
const DEADLINE_MS = 20_000;

const sandboxes: string[] = [];
afterAll(() => {
  for (const dir of sandboxes) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  args: string;
  code: number | "still running";
  stdout: string;
  stderr: string;
  /** What the run left in its empty working directory, and whether the absent data dir appeared. */
  cwdEntries: string[];
  dataDirCreated: boolean;
}

/**
 * `stablegate <args>` in a fresh empty working directory, with STABLEGATE_DATA_DIR naming a path
 * that does not exist. Unlike runCli it has a deadline: a command that starts working instead of
 * printing help never ends, so it is killed there and reported as still running.
 */
async function runIsolated(args: string[]): Promise<Run> {
  const sandbox = mkdtempSync(join(tmpdir(), "stablegate-help-"));
  sandboxes.push(sandbox);
  const cwd = join(sandbox, "cwd");
  const dataDir = join(sandbox, "data");
  Bun.spawnSync(["mkdir", cwd]);
  const { code, stdout, stderr, timedOut } = await runToExit([process.execPath, MAIN, ...args], {
    cwd,
    env: childEnv({ STABLEGATE_DATA_DIR: dataDir }),
    deadlineMs: DEADLINE_MS,
  });
  return {
    args: args.join(" "),
    code: timedOut ? "still running" : code,
    stdout,
    stderr,
    cwdEntries: readdirSync(cwd),
    dataDirCreated: existsSync(dataDir),
  };
}

/** What a help run must look like: exit 0, the page on stdout with `usage` and an example, nothing on disk. */
function expectHelp(run: Run, usage: string[]) {
  expect({
    args: run.args,
    code: run.code,
    stderr: run.stderr,
    usage: usage.filter((line) => !run.stdout.includes(line)),
    options: run.stdout.includes("Options:") && run.stdout.includes("-h, --help"),
    example: run.stdout.includes("Example"),
    cwdEntries: run.cwdEntries,
    dataDirCreated: run.dataDirCreated,
  }).toEqual({
    args: run.args,
    code: 0,
    stderr: "",
    usage: [],
    options: true,
    example: true,
    cwdEntries: [],
    dataDirCreated: false,
  });
}

const name = (path: string[]) => path.join(" ");

describe("every command answers --help and -h without doing its work", () => {
  for (const command of COMMANDS) {
    test(`stablegate ${name(command.path)}`, async () => {
      const runs = await Promise.all(["--help", "-h"].map((flag) => runIsolated([...command.path, flag])));
      for (const run of runs) expectHelp(run, command.usage);
      expect(runs[0]!.stdout).toBe(runs[1]!.stdout);
      // Its own page, not the overview: the summary, and every option with its description.
      expect(runs[0]!.stdout).toContain(command.summary.split(" ").slice(0, 4).join(" "));
      for (const [flag, says] of command.options) {
        expect(runs[0]!.stdout).toContain(flag);
        expect(runs[0]!.stdout).toContain(says.split(" ").slice(0, 3).join(" "));
      }
      // Examples as they would be pasted: a long one is broken over lines with ` \\`.
      for (const example of command.examples) expect(runs[0]!.stdout.replace(/ \\\n +/g, " ")).toContain(example);
    }, 60_000);
  }

  for (const group of Object.keys(GROUPS)) {
    test(`stablegate ${group} lists its commands`, async () => {
      const runs = await Promise.all(["--help", "-h"].map((flag) => runIsolated([group, flag])));
      for (const run of runs)
        expectHelp(
          run,
          commandsUnder(group).flatMap((command) => command.usage),
        );
    }, 60_000);
  }

  test("--help anywhere among a command's arguments counts, before a `--`", async () => {
    const runs = await Promise.all([
      runIsolated(["account", "create", "--name", "Help Shop", "--payout-address", "0x123", "--help"]),
      runIsolated(["user", "create", "--account", "acct_x", "--password-stdin", "-h", "--email", "a@b.example"]),
      runIsolated(["backup", "copy.db", "--force", "--help"]),
      runIsolated(["dev", "pay", "0xabc", "1", "-h"]),
      runIsolated(["serve", "--port", "1", "--help"]),
      runIsolated(["listen", "--url", "https://pay.example.com", "--key-stdin", "--help"]),
      runIsolated(["help", "db", "copy"]),
    ]);
    const [create, user, backup, pay, serve, listen, help] = runs;
    const usageOf = (...path: string[]) => COMMANDS.find((command) => name(command.path) === name(path))!.usage;
    expectHelp(create!, usageOf("account", "create"));
    expectHelp(user!, usageOf("user", "create"));
    expectHelp(backup!, usageOf("backup"));
    expectHelp(pay!, usageOf("dev", "pay"));
    expectHelp(serve!, usageOf("serve"));
    expectHelp(listen!, usageOf("listen"));
    expectHelp(help!, usageOf("db", "copy"));
    // After `--` it is an argument like any other: backup copies to a file named --help.
    const quoted = await runIsolated(["backup", "--", "--help"]);
    expect({ code: quoted.code, refused: quoted.stderr.includes("no Stablegate database") }).toEqual({
      code: 78,
      refused: true,
    });
    expect(quoted.stdout).not.toContain("Usage:");
  }, 60_000);

  test("the overview: --help, -h, help and no arguments print every command's usage", async () => {
    const runs = await Promise.all([["--help"], ["-h"], ["help"], []].map(runIsolated));
    const usage = COMMANDS.flatMap((command) => command.usage);
    for (const run of runs) expectHelp(run, usage);
    expect(new Set(runs.map((run) => run.stdout)).size).toBe(1);
    expect(runs[0]!.stdout).toContain("stablegate COMMAND --help");
    for (const line of runs[0]!.stdout.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(100);
  }, 60_000);

  test("an unknown command still exits 2 with a pointer to --help, asked for help or not", async () => {
    const runs = await Promise.all([
      runIsolated(["frobnicate", "--help"]),
      runIsolated(["account", "frobnicate", "--help"]),
      runIsolated(["help", "frobnicate"]),
      // A name every object has is no group.
      runIsolated(["toString", "--help"]),
    ]);
    expect(
      runs.map(({ code, stdout, stderr, cwdEntries, dataDirCreated }) => ({
        code,
        stdout,
        stderr,
        cwdEntries,
        dataDirCreated,
      })),
    ).toEqual(
      [
        'stablegate: unknown command "frobnicate" (see stablegate --help)\n',
        "stablegate: unknown command: account frobnicate (see stablegate --help)\n",
        'stablegate: unknown command "frobnicate" (see stablegate --help)\n',
        'stablegate: unknown command "toString" (see stablegate --help)\n',
      ].map((stderr) => ({ code: 2, stdout: "", stderr, cwdEntries: [], dataDirCreated: false })),
    );
  }, 60_000);
});

describe("the table covers the command line", () => {
  test("every command the CLI has is in the table, each named once", () => {
    const names = COMMANDS.map((command) => name(command.path));
    expect(names).toEqual([...new Set(names)]);
    // Every command the sub-commands' own tables run (accounts.ts, users.ts: `"account create": {`).
    const implemented = [...new Glob("src/cli/*.ts").scanSync(REPO_ROOT)].flatMap((file) =>
      [...readFileSync(resolve(REPO_ROOT, file), "utf8").matchAll(/^\s+"([a-z]+ [a-z-]+)": \{/gm)].map((m) => m[1]!),
    );
    expect(implemented.length).toBeGreaterThanOrEqual(11);
    expect(implemented.filter((command) => !names.includes(command))).toEqual([]);
    // And every command the command line has had.
    const known = ["serve", "dev", "dev pay", "account create", "account list", "account show", "account set-payout"];
    known.push("account set-speed");
    known.push("key create", "key list", "key revoke", "user create", "user list", "user reset-password");
    known.push("user delete", "backup", "db copy", "listen", "version");
    expect(known.filter((command) => !names.includes(command))).toEqual([]);
    // Each command's first word is a command itself or a group, and each group has commands.
    expect(
      COMMANDS.filter(
        (command) => command.path.length > 1 && !(command.path[0]! in GROUPS) && !names.includes(command.path[0]!),
      ).map((command) => name(command.path)),
    ).toEqual([]);
    expect(Object.keys(GROUPS).filter((group) => commandsUnder(group).length === 0)).toEqual([]);
  });

  test("main.ts runs commands only through the table", () => {
    const main = readFileSync(MAIN, "utf8");
    const cliModules = [...main.matchAll(/from "\.\/cli\/([^"]+)"|import\("\.\/cli\/([^"]+)"\)/g)].map(
      (m) => m[1] ?? m[2],
    );
    expect([...new Set(cliModules)].sort()).toEqual(["args.ts", "commands.ts", "help.ts"]);
    expect(main).not.toMatch(/\bcase "/);
  });
});
