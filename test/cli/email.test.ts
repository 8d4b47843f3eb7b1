/**
 * `stablegate email test` and `stablegate email customers` as real processes: the test email
 * reaches a real SMTP server over STARTTLS (the certificate trusted through NODE_EXTRA_CA_CERTS),
 * a refusal exits 1 with the server's answer, an unconfigured server exits 78, and no output
 * ever holds the password; the customers switch reaches the account's setting.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { openStore, storeLocationFrom } from "../../src/db/open.ts";
import { createEmailStore } from "../../src/email/store.ts";
import { runCli } from "../support/cli.ts";
import { makeTempDir, TEST_PAYOUT, testEnv } from "../support/server.ts";
import { SMTP_PASSWORD, startTestSmtp, type TestSmtp } from "../support/smtp.ts";

let smtp: TestSmtp;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  smtp = await startTestSmtp();
  dir = makeTempDir();
  env = {
    ...testEnv(dir),
    STABLEGATE_SMTP_URL: smtp.url,
    STABLEGATE_SMTP_FROM: "ops@shop.example",
    NODE_EXTRA_CA_CERTS: smtp.caFile,
  };
});
afterAll(async () => {
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

const noSecret = (out: string) => {
  expect(out).not.toContain(SMTP_PASSWORD);
  expect(out).not.toContain(encodeURIComponent(SMTP_PASSWORD));
};

describe("stablegate email test", () => {
  test("sends one email now and prints what the server answered", async () => {
    const run = await runCli(["email", "test", "me@shop.example"], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      sent: true,
      to: "me@shop.example",
      from: "ops@shop.example",
      server: `smtp://127.0.0.1:${smtp.port}`,
    });
    noSecret(run.stdout + run.stderr);
    const mail = smtp.messages.find((m) => m.to.includes("me@shop.example"))!;
    expect(mail.subject).toBe("Stablegate test email");
    expect(mail.secure).toBe(true);
  });

  test("smtps:// speaks TLS from the first byte", async () => {
    const implicit = await startTestSmtp({ implicitTls: true });
    try {
      const run = await runCli(["email", "test", "tls@shop.example"], {
        ...env,
        STABLEGATE_SMTP_URL: implicit.url,
        NODE_EXTRA_CA_CERTS: implicit.caFile,
      });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).server).toBe(`smtps://127.0.0.1:${implicit.port}`);
      expect(implicit.messages.map((m) => [m.to, m.secure])).toEqual([[["tls@shop.example"], true]]);
    } finally {
      await implicit.close();
    }
  });

  test("a refused address exits 1 with the server's answer", async () => {
    smtp.refuse.add("nobody@shop.example");
    const run = await runCli(["email", "test", "nobody@shop.example"], env);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ sent: false, error: expect.stringMatching(/^550 /) });
    noSecret(run.stdout + run.stderr);
  });

  test("a certificate it cannot trust is refused, not ignored", async () => {
    const { NODE_EXTRA_CA_CERTS: _, ...untrusting } = env;
    const run = await runCli(["email", "test", "me@shop.example"], untrusting);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error).toMatch(/certificate/i);
    noSecret(run.stdout + run.stderr);
  });

  test("email off exits 78 naming the variable; no address is a usage error", async () => {
    const off = await runCli(["email", "test", "me@shop.example"], testEnv(dir));
    expect(off.code).toBe(78);
    expect(off.stderr).toContain("STABLEGATE_SMTP_URL");
    const bare = await runCli(["email", "test"], env);
    expect(bare.code).toBe(2);
  });
});

describe("stablegate email customers", () => {
  test("turns an account's customer emails off and on", async () => {
    const created = JSON.parse(
      (await runCli(["account", "create", "--name", "CLI Shop", "--payout-address", TEST_PAYOUT], env)).stdout,
    ) as { account: { id: string } };
    const accountId = created.account.id;
    const setting = async () => {
      const db = await openStore(storeLocationFrom(env));
      try {
        return await createEmailStore(db).customerEmails(accountId);
      } finally {
        await db.close();
      }
    };
    expect(await setting()).toBe(true);
    const off = await runCli(["email", "customers", "off", "--account", accountId], env);
    expect([off.code, JSON.parse(off.stdout)]).toEqual([0, { account: accountId, customer_emails: "off" }]);
    expect(await setting()).toBe(false);
    expect((await runCli(["email", "customers", "on", "--account", accountId], env)).code).toBe(0);
    expect(await setting()).toBe(true);
    const unknown = await runCli(["email", "customers", "off", "--account", "acct_nope"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no account acct_nope");
    expect((await runCli(["email", "customers", "maybe", "--account", accountId], env)).code).toBe(2);
  });
});
