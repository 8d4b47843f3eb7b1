/**
 * `stablegate account set-speed`, run as the real command against a running server's store
 * (SQLite, or PostgreSQL with STABLEGATE_TEST_ENGINE=postgres): it prints the account with the
 * policy in effect and where it comes from, `account show` and `account list` agree, `default`
 * follows STABLEGATE_SPEED again, the server's new payments take it, and a bad value or an
 * unknown account exits non-zero with one line and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { runCli } from "../support/cli.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
/** The CLI's environment, as the server's: its default speed is final. */
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ defaultSpeed: "final" });
  env = { ...server.env, STABLEGATE_SPEED: "final" };
});
afterAll(() => server?.stop());

const speedCli = async (args: string[], extra: Record<string, string> = {}) => {
  const { code, stdout, stderr } = await runCli(["account", ...args], { ...env, ...extra });
  return { code, stdout, stderr, json: code === 0 ? JSON.parse(stdout) : undefined };
};

const storedSpeed = async (accountId: string) =>
  (await server.running.db.get<{ speed: string | null }>(sql`SELECT speed FROM accounts WHERE id = ${accountId}`))!
    .speed;

describe("account set-speed", () => {
  test("prints the account with its own policy; show and list agree; default follows STABLEGATE_SPEED again", async () => {
    const { accountId } = await server.createAccount("Speedy Shop");
    const shown = await speedCli(["show", accountId]);
    expect(shown.json).toMatchObject({ id: accountId, speed: "final", speed_source: "server" });
    // What STABLEGATE_SPEED says in the command's environment is what an account that follows it shows.
    expect((await speedCli(["show", accountId], { STABLEGATE_SPEED: "fast" })).json.speed).toBe("fast");
    expect((await speedCli(["show", accountId], { STABLEGATE_SPEED: "" })).json.speed).toBe("standard");

    const set = await speedCli(["set-speed", accountId, "fast"]);
    expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
    expect(set.json).toEqual({ ...shown.json, speed: "fast", speed_source: "account" });
    expect(await storedSpeed(accountId)).toBe("fast");
    expect((await speedCli(["show", accountId])).json).toEqual(set.json);
    expect((await speedCli(["list"])).json).toContainEqual(set.json);
    // The account's own policy does not move with STABLEGATE_SPEED.
    expect((await speedCli(["show", accountId], { STABLEGATE_SPEED: "standard" })).json.speed).toBe("fast");

    const back = await speedCli(["set-speed", accountId, "default"]);
    expect(back.json).toEqual(shown.json);
    expect(await storedSpeed(accountId)).toBeNull();
  });

  test("the server's new payments take the account's policy; those made before keep theirs", async () => {
    const { accountId, apiKey } = await server.createAccount("Switching Shop");
    const merchant = api(server.url, apiKey);
    const create = async () => (await merchant("/api/v1/payments", { body: { amount: "4.00" } })).json;
    const first = await create();
    expect(first.speed).toBe("final");
    expect((await speedCli(["set-speed", accountId, "standard"])).code).toBe(0);
    const second = await create();
    expect(second.speed).toBe("standard");
    expect((await speedCli(["set-speed", accountId, "fast"])).code).toBe(0);
    expect((await create()).speed).toBe("fast");
    const speeds = await Promise.all(
      [first, second].map(async (p) => (await merchant(`/api/v1/payments/${p.id}`)).json.speed),
    );
    expect(speeds).toEqual(["final", "standard"]);
  });

  test("a bad value or a missing argument exits 2, an unknown account 1, with one line; nothing changes", async () => {
    const { accountId } = await server.createAccount("Careful Shop");
    expect((await speedCli(["set-speed", accountId, "final"])).code).toBe(0);
    const allowed = "speed must be one of fast, standard, final, or default";
    const runs: Array<[string[], number, string]> = [
      [["set-speed", accountId, "instant"], 2, allowed],
      [["set-speed", accountId, "FAST"], 2, allowed],
      [["set-speed", accountId, ""], 2, allowed],
      [["set-speed", accountId], 2, "usage: stablegate account set-speed ACCOUNT_ID fast|standard|final|default"],
      [["set-speed", accountId, "fast", "extra"], 2, "extra"],
      [["set-speed", "acct_nope", "fast"], 1, "no account acct_nope"],
    ];
    for (const [args, expected, says] of runs) {
      const { code, stdout, stderr } = await speedCli(args);
      expect({ args, code, stdout, lines: stderr.trimEnd().split("\n").length, says: stderr.includes(says) }).toEqual({
        args,
        code: expected,
        stdout: "",
        lines: 1,
        says: true,
      });
    }
    expect(await storedSpeed(accountId)).toBe("final");
  });

  test("a bad STABLEGATE_SPEED stops the command with exit 78 and one line naming it, as it stops the server", async () => {
    const { accountId } = await server.createAccount("Misconfigured Shop");
    const { code, stdout, stderr } = await speedCli(["set-speed", accountId, "fast"], { STABLEGATE_SPEED: "instant" });
    expect({ code, stdout }).toEqual({ code: 78, stdout: "" });
    expect(stderr.trimEnd()).toBe('stablegate: STABLEGATE_SPEED: must be one of fast, standard, final, got "instant"');
    expect(await storedSpeed(accountId)).toBeNull();
  });

  test("--help prints its usage, what each policy means and an example, and changes nothing", async () => {
    const { code, stdout } = await runCli(["account", "set-speed", "--help"], env);
    expect(code).toBe(0);
    expect(stdout).toContain("stablegate account set-speed ACCOUNT_ID fast|standard|final|default");
    expect(stdout).toContain("default follows the server's STABLEGATE_SPEED");
    expect(stdout).toContain("stablegate account set-speed acct_hs1BYHqNmEQDzhVF4Tf5NR5U fast");
  });
});
