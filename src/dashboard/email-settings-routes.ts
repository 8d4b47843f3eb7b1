import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import { ValidationError } from "../lib/errors.ts";
import type { Notice } from "./admin-page.ts";
import type { DashboardRoute, DashboardSession } from "./kit.ts";
import { seeOther } from "./kit.ts";
import { notFoundPage } from "./layout.ts";
import { settingsPage } from "./settings-routes.ts";

const back = { href: "/dashboard", label: "Back to the dashboard" };
const gone = (session: Parameters<typeof notFoundPage>[0]) =>
  notFoundPage(session, { nav: "settings", title: "Not found", message: "This account no longer exists.", back });

/**
 * The settings page's email forms: the account's customer emails, the signed-in user's own
 * notices, and the test email, which answers with what the SMTP server said.
 */
export function emailSettingsRoutes(ctx: AppContext): DashboardRoute[] {
  const page = (session: DashboardSession, account: Account, notice?: Notice, status = 200) =>
    settingsPage(ctx, session, account, notice, status);
  return [
    {
      method: "POST",
      path: "/dashboard/settings/email/customers",
      handle: async ({ session, form }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return gone(session);
        const value = form.get("customer_emails");
        if (value !== "on" && value !== "off")
          return page(session, account, { tone: "bad", text: "customer_emails: choose on or off" }, 400);
        await ctx.email.setCustomerEmails(account.id, value === "on");
        return seeOther("/dashboard/settings?saved=email#email");
      },
    },
    {
      method: "POST",
      path: "/dashboard/settings/email/notices",
      handle: async ({ session, form }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return gone(session);
        try {
          await ctx.email.setPaymentNotices(session.userId, form.get("payments") ?? "");
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return page(session, account, { tone: "bad", text: error.message }, 400);
        }
        return seeOther("/dashboard/settings?saved=email#email");
      },
    },
    {
      method: "POST",
      path: "/dashboard/settings/email/test",
      handle: async ({ session, form }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return gone(session);
        const address = (form.get("address") ?? "").trim();
        try {
          const sent = await ctx.email.sendTest(address);
          return page(
            session,
            account,
            sent.ok
              ? { tone: "ok", text: `Test email sent to ${address}: the SMTP server accepted it.` }
              : { tone: "bad", text: `The test email to ${address} failed: ${sent.error}` },
            sent.ok ? 200 : 502,
          );
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return page(session, account, { tone: "bad", text: error.message }, 400);
        }
      },
    },
  ];
}
