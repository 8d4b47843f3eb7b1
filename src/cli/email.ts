import { createAccountStore } from "../accounts/store.ts";
import { loadConfig } from "../config.ts";
import { openStore, storeLocationFrom } from "../db/open.ts";
import { sendTestEmail } from "../email/service.ts";
import { createEmailStore } from "../email/store.ts";
import { smtpTransport } from "../email/transport.ts";
import { systemClock } from "../lib/clock.ts";
import { ConfigError } from "../lib/errors.ts";
import { describeSmtp } from "../lib/smtp-url.ts";
import { required } from "./accounts.ts";
import { parseArgs, UsageError } from "./args.ts";

type Env = Record<string, string | undefined>;

/**
 * `email test ADDRESS`: sends one email now through STABLEGATE_SMTP_URL, with no server running,
 * and says what the SMTP server answered. Exit 0 when it accepted the email, 1 when not.
 */
export async function runEmailTest(argv: string[], env: Env): Promise<{ code: number; out: unknown }> {
  const { positionals } = parseArgs(argv, {}, 1);
  const address = positionals[0];
  if (!address) throw new UsageError("ADDRESS is required: stablegate email test you@example.com");
  const config = loadConfig(env);
  if (!config.email)
    throw new ConfigError("STABLEGATE_SMTP_URL", "is not set: set it and STABLEGATE_SMTP_FROM to send email");
  const { smtp, from } = config.email;
  const sender = {
    target: smtp,
    from,
    send: smtpTransport(smtp),
    messageDomain: from.slice(from.lastIndexOf("@") + 1),
  };
  const result = await sendTestEmail(sender, config.baseUrl, address, systemClock.now());
  const server = describeSmtp(smtp);
  return result.ok
    ? { code: 0, out: { sent: true, to: address.trim(), from, server } }
    : { code: 1, out: { sent: false, to: address.trim(), from, server, error: result.error } };
}

/** `email customers on|off --account ACCOUNT_ID`: the account's emails to its customers. */
export async function runEmailCustomers(argv: string[], env: Env): Promise<unknown> {
  const { positionals, flags } = parseArgs(argv, { account: { type: "string" } }, 1);
  const value = positionals[0];
  if (value !== "on" && value !== "off")
    throw new UsageError("say on or off: stablegate email customers off --account ACCOUNT_ID");
  const accountId = required(flags, "account");
  const db = await openStore(storeLocationFrom(env));
  try {
    if (!(await createAccountStore(db).findAccount(accountId)))
      throw new UsageError(`--account: no account ${accountId}`);
    await createEmailStore(db).setCustomerEmails(accountId, value === "on", systemClock.now());
    return { account: accountId, customer_emails: value };
  } finally {
    await db.close();
  }
}
