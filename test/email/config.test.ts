/**
 * STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM: email is off until both are set, a bad value
 * names its variable in one line, and the password is decoded for the transport and never
 * appears in an error, a description or the serve command's output.
 */
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { ConfigError } from "../../src/lib/errors.ts";
import { describeSmtp } from "../../src/lib/smtp-url.ts";
import { spawnServe } from "../support/serve-process.ts";
import { makeTempDir, testEnv } from "../support/server.ts";

const FROM = { STABLEGATE_SMTP_FROM: "billing@shop.example" };
const SECRET = "s3cr%3At-pw";

function refused(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe("email configuration", () => {
  test("off until both are set", () => {
    expect(loadConfig({}).email).toBeNull();
  });

  test("smtp:// is STARTTLS on 587 by default, smtps:// implicit TLS on 465, user and password percent-decoded", () => {
    const starttls = loadConfig({
      STABLEGATE_SMTP_URL: `smtp://me%40shop.example:${SECRET}@mail.example.com`,
      ...FROM,
    });
    expect(starttls.email).toEqual({
      smtp: { host: "mail.example.com", port: 587, implicitTls: false, user: "me@shop.example", password: "s3cr:t-pw" },
      from: "billing@shop.example",
    });
    const implicit = loadConfig({ STABLEGATE_SMTP_URL: "smtps://u:p@mail.example.com:2465", ...FROM }).email!;
    expect(implicit.smtp).toMatchObject({ port: 2465, implicitTls: true });
    expect(describeSmtp(starttls.email!.smtp)).toBe("smtp://mail.example.com:587");
  });

  test("bad values name the variable and never repeat the password", () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { STABLEGATE_SMTP_URL: `http://u:${SECRET}@mail.example.com`, ...FROM },
        /^STABLEGATE_SMTP_URL: must start with smtp:\/\//,
      ],
      [{ STABLEGATE_SMTP_URL: `smtp://u:${SECRET}@`, ...FROM }, /^STABLEGATE_SMTP_URL: /],
      [
        { STABLEGATE_SMTP_URL: `smtp://u:${SECRET}@mail.example.com/x?y`, ...FROM },
        /^STABLEGATE_SMTP_URL: must be only/,
      ],
      [
        { STABLEGATE_SMTP_URL: `smtp://u:%E0%A4%A@mail.example.com`, ...FROM },
        /^STABLEGATE_SMTP_URL: has a badly percent-encoded password/,
      ],
      [{ STABLEGATE_SMTP_URL: `smtp://u:${SECRET}@mail.example.com` }, /^STABLEGATE_SMTP_FROM: required/],
      [FROM, /^STABLEGATE_SMTP_URL: required/],
      [
        { STABLEGATE_SMTP_URL: `smtp://u:${SECRET}@mail.example.com`, STABLEGATE_SMTP_FROM: "Shop <a@b.c>" },
        /^STABLEGATE_SMTP_FROM: must be a bare address/,
      ],
    ];
    for (const [env, message] of cases) {
      const text = refused(env);
      expect(text).toMatch(message);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain("s3cr:t");
    }
  });

  test("serve stops with one line naming the variable, exit 78, no password", async () => {
    const dir = makeTempDir();
    const env = { ...testEnv(dir), STABLEGATE_SMTP_URL: `ftp://u:${SECRET}@mail.example.com`, ...FROM };
    const serve = spawnServe({ ...env, STABLEGATE_PORT: "1" });
    try {
      expect(await serve.exited).toBe(78);
      const out = `${await serve.stdout()}${await serve.stderr()}`;
      expect(out.trim().split("\n")).toHaveLength(1);
      expect(out).toContain("STABLEGATE_SMTP_URL: must start with smtp://");
      expect(out).not.toContain(SECRET);
    } finally {
      await serve.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
