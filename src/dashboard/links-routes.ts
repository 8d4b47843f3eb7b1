import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import { qrSvg } from "../html/qr.ts";
import { DEFAULT_LIMIT } from "../http/query.ts";
import { bodyValidator } from "../http/validate.ts";
import { DomainError, NotFoundError, ValidationError } from "../lib/errors.ts";
import { typedAmount } from "../lib/money.ts";
import { CreatePaymentLinkSchema } from "../payment-links/schema.ts";
import { PAYMENT_LINK_ID } from "../payment-links/service.ts";
import type { DashboardRoute, DashboardSession } from "./kit.ts";
import { seeOther } from "./kit.ts";
import {
  LINK_PAYMENTS_SHOWN,
  linkDetailPage,
  linkNotFoundPage,
  linksListPage,
  type NewLinkForm,
  newLinkPage,
} from "./links-page.ts";

const createLinkBody = bodyValidator(CreatePaymentLinkSchema);

/**
 * The dashboard's payment links: list, create, one link with its QR, deactivate and activate.
 * Everything goes through the payment links service, scoped to the signed-in user's account.
 */
export function linksRoutes(ctx: AppContext): DashboardRoute[] {
  const links = ctx.paymentLinks;
  const baseUrl = ctx.view.baseUrl;
  /** The signed-in user's account; the gate guarantees one, the account store may have lost it. */
  const accountOf = async (session: DashboardSession): Promise<Account> => {
    const account = await ctx.accounts.findAccount(session.accountId);
    if (!account) throw new NotFoundError("no such account");
    return account;
  };

  return [
    {
      method: "GET",
      path: "/dashboard/links",
      handle: async ({ session, query }) => {
        const after = query.get("starting_after") ?? undefined;
        let page: Awaited<ReturnType<typeof links.list>>;
        try {
          page = await links.list(await accountOf(session), {
            limit: DEFAULT_LIMIT * 2,
            startingAfter: after !== undefined && PAYMENT_LINK_ID.test(after) ? after : undefined,
          });
        } catch (error) {
          if (error instanceof ValidationError) return seeOther("/dashboard/links"); // a stale or foreign cursor
          throw error;
        }
        return linksListPage({
          session,
          baseUrl,
          links: page.rows,
          olderAfter: page.hasMore ? page.rows.at(-1)!.id : null,
          paged: after !== undefined,
        });
      },
    },
    { method: "GET", path: "/dashboard/links/new", handle: ({ session }) => newLinkPage(session) },
    {
      method: "POST",
      path: "/dashboard/links/new",
      handle: async ({ session, form }) => {
        const entered = enteredForm(form);
        try {
          const link = await links.create(await accountOf(session), createLinkBody(requestOf(entered)), null);
          return seeOther(`/dashboard/links/${link.id}?created=1`);
        } catch (error) {
          if (error instanceof DomainError && error.kind === "invalid")
            return newLinkPage(session, entered, error.message);
          throw error;
        }
      },
    },
    {
      method: "GET",
      path: "/dashboard/links/:id",
      handle: async ({ session, params, query }) => {
        const link = await findOwn(session, params.id ?? "");
        if (!link) return linkNotFoundPage(session);
        return linkDetailPage({
          session,
          baseUrl,
          link,
          payments: await ctx.payments.listForLink(await accountOf(session), link.id, LINK_PAYMENTS_SHOWN),
          qrSvg: await qrSvg(`${baseUrl}/l/${link.id}`),
          created: query.get("created") === "1",
        });
      },
    },
    {
      method: "POST",
      path: "/dashboard/links/:id",
      handle: async ({ session, params, form }) => {
        const link = await findOwn(session, params.id ?? "");
        if (!link) return linkNotFoundPage(session);
        const detail = `/dashboard/links/${link.id}`;
        const active = form.get("active");
        if (active !== "true" && active !== "false") return seeOther(detail);
        await links.setActive(await accountOf(session), link.id, active === "true");
        // Back to the page the button was on: the list, or this link's own page.
        return seeOther(form.get("back") === detail ? detail : "/dashboard/links");
      },
    },
  ];

  async function findOwn(session: DashboardSession, id: string) {
    try {
      return await links.retrieve(await accountOf(session), id);
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  }
}

/** The new-link form as typed (blank fields absent), kept to fill the form again on a refusal. */
function enteredForm(form: URLSearchParams): NewLinkForm {
  const field = (name: string) => form.get(name)?.trim() || undefined;
  return {
    description: field("description"),
    mode: form.get("mode") === "choose" ? "choose" : "fixed",
    amount: field("amount"),
    min_amount: field("min_amount"),
    max_amount: field("max_amount"),
    success_url: field("success_url"),
  };
}

/**
 * The create request the form stands for: the amount for a fixed link, the bounds when the payer
 * chooses (the fields of the other choice are ignored, as the radio button says).
 */
function requestOf(form: NewLinkForm): Record<string, string> {
  const request: Record<string, string | undefined> = { description: form.description, success_url: form.success_url };
  if (form.mode === "choose") {
    request.min_amount = typedAmount(form.min_amount);
    request.max_amount = typedAmount(form.max_amount);
  } else {
    request.amount = typedAmount(form.amount);
    if (request.amount === undefined)
      throw new ValidationError("amount is required for a fixed amount; or let the payer choose it");
  }
  return Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined)) as Record<string, string>;
}
