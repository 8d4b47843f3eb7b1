import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import { statusOf } from "../http/errors.ts";
import { DomainError, NotFoundError, ValidationError } from "../lib/errors.ts";
import { notFoundPage } from "./admin-routes.ts";
import { type DashboardRoute, type DashboardSession, seeOther } from "./kit.ts";
import { settingsPage } from "./settings-routes.ts";

/**
 * The settings page's business forms: the details, and the logo (uploaded as multipart, or removed).
 * A refused form shows the settings page again with the reason, and changes nothing.
 */
export function businessRoutes(ctx: AppContext): DashboardRoute[] {
  const back = { href: "/dashboard", label: "Back to the dashboard" };
  const refused = async (error: unknown, session: DashboardSession, account: Account) => {
    if (!(error instanceof DomainError) || error instanceof NotFoundError) throw error;
    return settingsPage(ctx, session, account, { tone: "bad", text: error.message }, statusOf(error));
  };
  return [
    {
      method: "POST",
      path: "/dashboard/settings/business",
      handle: async ({ session, form }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return notFoundPage(session, "settings", back);
        try {
          await ctx.business.setText(account.id, {
            legalName: form.get("legal_name") ?? "",
            addressLines: (form.get("address") ?? "").split(/\r?\n/),
            taxId: form.get("tax_id") ?? "",
            supportEmail: form.get("support_email") ?? "",
          });
        } catch (error) {
          return refused(error, session, account);
        }
        return seeOther("/dashboard/settings?saved=business#business-title");
      },
    },
    {
      method: "POST",
      path: "/dashboard/settings/logo",
      handle: async ({ session, form, files }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return notFoundPage(session, "settings", back);
        if (form.get("remove") === "yes") {
          await ctx.business.removeLogo(account.id);
          return seeOther("/dashboard/settings?saved=logo-removed#business-title");
        }
        const file = files.get("logo");
        try {
          if (!file || file.size === 0) throw new ValidationError("logo: choose a PNG or JPEG file to upload");
          await ctx.business.setLogo(account.id, new Uint8Array(await file.arrayBuffer()));
        } catch (error) {
          return refused(error, session, account);
        }
        return seeOther("/dashboard/settings?saved=logo#business-title");
      },
    },
  ];
}
