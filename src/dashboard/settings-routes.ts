/**
 * The dashboard's settings page and its speed form; the business and email forms on the same page
 * have routes of their own (business-routes.ts, email-settings-routes.ts) and draw it with
 * settingsPage.
 */
import { formatUnits } from "viem";
import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import { CHAINS } from "../lib/chains.ts";
import type { Speed } from "../lib/speed.ts";
import type { Notice } from "./admin-page.ts";
import { notFoundPage, refusal } from "./admin-routes.ts";
import { BUSINESS_SAVED } from "./business-form.ts";
import { type DashboardRoute, type DashboardSession, seeOther } from "./kit.ts";
import { dashboardPage } from "./layout.ts";
import { settingsBody } from "./settings-page.ts";

/** How long the settings page waits for the relayer's balance before showing it as unavailable. */
const BALANCE_TIMEOUT_MS = 2_000;

/** The settings page, with what just happened or why a form was refused; also drawn by its forms' routes. */
export async function settingsPage(
  ctx: AppContext,
  session: DashboardSession,
  account: Account,
  notice?: Notice,
  status = 200,
): Promise<Response> {
  const { config } = ctx;
  const gas = await ctx.chain.relayerGas(BALANCE_TIMEOUT_MS);
  const native = CHAINS.get(config.chain.name)?.viem.nativeCurrency ?? { symbol: "ETH", decimals: 18 };
  return dashboardPage({
    title: "Settings",
    session,
    nav: "settings",
    status,
    body: settingsBody({
      session,
      notice,
      accountId: account.id,
      accountName: account.name,
      payoutAddress: account.payoutAddress,
      feeBps: account.feeBps ?? config.feeBps,
      feeSource: account.feeBps === null ? "server" : "account",
      speed: account.speed,
      defaultSpeed: config.defaultSpeed,
      finalTag: config.finalTag,
      chain: {
        name: config.chain.name,
        chainId: config.chain.chainId,
        usdc: config.chain.usdc,
        confirmations: config.chain.confirmations,
      },
      relayer: {
        address: gas.address,
        balance: gas.balanceWei === null ? null : `${gasAmount(gas.balanceWei, native.decimals)} ${native.symbol}`,
      },
      business: await ctx.business.details(account.id),
      email: {
        session,
        health: await ctx.email.health(),
        customerEmails: await ctx.email.customerEmails(account.id),
        notices: await ctx.email.paymentNotices(session.userId),
      },
    }),
  });
}

export function settingsRoutes(ctx: AppContext): DashboardRoute[] {
  const { config } = ctx;
  const back = { href: "/dashboard", label: "Back to the dashboard" };
  const page = (session: DashboardSession, account: Account, notice?: Notice, status = 200) =>
    settingsPage(ctx, session, account, notice, status);

  return [
    {
      method: "GET",
      path: "/dashboard/settings",
      handle: async ({ session, query }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return notFoundPage(session, "settings", back);
        // Only a fixed word is read from the link, so a crafted one cannot put words of its own on the page.
        const saved = query.get("saved");
        const notice: Notice | undefined =
          saved === "speed"
            ? { tone: "ok", text: speedSaved(account.speed, config.defaultSpeed) }
            : saved && saved in BUSINESS_SAVED
              ? { tone: "ok", text: BUSINESS_SAVED[saved as keyof typeof BUSINESS_SAVED] }
              : saved === "email"
                ? { tone: "ok", text: "Email settings saved." }
                : undefined;
        return page(session, account, notice);
      },
    },
    {
      method: "POST",
      path: "/dashboard/settings/speed",
      handle: async ({ session, form }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return notFoundPage(session, "settings", back);
        try {
          await ctx.accounts.setSpeed(account.id, form.get("speed") ?? "");
        } catch (error) {
          const refused = refusal(error);
          if (!refused) return notFoundPage(session, "settings", back);
          return page(session, account, refused.notice, refused.status);
        }
        return seeOther("/dashboard/settings?saved=speed");
      },
    },
  ];
}

/** What the settings page says once the speed form is saved (the 303 lands there). */
function speedSaved(speed: Speed | null, defaultSpeed: Speed): string {
  const which = speed === null ? `the server's default, ${defaultSpeed}` : speed;
  return `Speed saved: payments created from now on run under ${which}. Payments created before keep theirs.`;
}

/** 0.012345 ETH: six decimals, rounded down, are plenty to judge a gas balance by. */
function gasAmount(wei: bigint, decimals: number): string {
  const [whole, fraction = ""] = formatUnits(wei, decimals).split(".");
  const shown = fraction.slice(0, 6).replace(/0+$/, "");
  return shown ? `${whole}.${shown}` : whole!;
}
