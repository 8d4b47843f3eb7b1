import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { pageHeaders } from "../html/headers.ts";
import { clientAddressOf } from "../http/client-address.ts";
import { bodyValidator } from "../http/validate.ts";
import { DomainError, type ErrorKind, TooManyRequestsError } from "../lib/errors.ts";
import { typedAmount } from "../lib/money.ts";
import { LINK_PAY_LIMIT, READ_LIMIT } from "../rate-limits/index.ts";
import { linkBusyPage, linkNotFoundPage, linkPage } from "./page.ts";
import { PayThroughLinkSchema } from "./schema.ts";
import type { PaymentLinkRow } from "./store.ts";

/** As the checkout page's, but its form may post back here. */
const LINK_PAGE_HEADERS = pageHeaders("'self'");
const payForm = bodyValidator(PayThroughLinkSchema);
/** Refusals answered with the form again, and their status. */
const FORM_REFUSALS: Partial<Record<ErrorKind, number>> = { invalid: 400, conflict: 409, unprocessable: 422 };

const page = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...LINK_PAGE_HEADERS, ...headers } });
const notFound = () => page(linkNotFoundPage(), 404);
const busy = (error: TooManyRequestsError) =>
  page(linkBusyPage(error.message), 429, { "retry-after": String(error.retryAfterSeconds) });

/**
 * The public page of a payment link, /l/<id>, and its form. Unknown, malformed and deactivated
 * links are the same 404 page; views and payments started are limited per client, never per
 * link, so no one client can close a link for everyone; every refusal is a page.
 */
export function linkPageRoutes(ctx: AppContext) {
  const links = ctx.paymentLinks;
  const clientOf = clientAddressOf(ctx.config.trustedProxies);
  const form = async (
    link: PaymentLinkRow,
    status = 200,
    entered: { error?: string; amount?: string; email?: string } = {},
  ) =>
    page(
      linkPage(link, { merchantName: await links.merchantName(link), nonce: links.formToken(link.id), ...entered }),
      status,
    );

  return new Elysia()
    .get("/l/:id", async ({ params, request, server }) => {
      const link = await links.findActive(params.id);
      if (!link) return notFound();
      try {
        await ctx.rateLimiter.take(`link-view:${clientOf(request, server)}`, READ_LIMIT);
      } catch (error) {
        if (error instanceof TooManyRequestsError) return busy(error);
        throw error;
      }
      return form(link);
    })
    .post("/l/:id", async ({ params, body, request, server }) => {
      const link = await links.findActive(params.id);
      if (!link) return notFound();
      const fields = body instanceof URLSearchParams ? body : new URLSearchParams();
      const entered = { amount: fields.get("amount") ?? undefined, email: fields.get("email") ?? undefined };
      try {
        const input = payForm({
          nonce: fields.get("nonce") ?? "",
          amount: typedAmount(entered.amount),
          email: entered.email?.trim() || undefined,
        });
        // Taken only for a payment about to be created: sending a form again costs nothing.
        const admit = () => ctx.rateLimiter.take(`link-pay:${clientOf(request, server)}`, LINK_PAY_LIMIT);
        return redirect(`/pay/${await links.pay(link.id, input, admit)}`);
      } catch (error) {
        if (error instanceof TooManyRequestsError) return busy(error);
        if (!(error instanceof DomainError)) throw error;
        if (error.kind === "not_found") return notFound(); // deactivated meanwhile
        const status = FORM_REFUSALS[error.kind];
        if (status === undefined) throw error;
        // Refused input, an expired form, or this form's token met again: the form again, as it
        // was filled in, with a fresh token and the reason. Nothing was created.
        return form(link, status, { error: payerMessage(error), ...entered });
      }
    });
}

/** The idempotency refusals in the payer's words; the form's own ones name the field already. */
function payerMessage(error: DomainError): string {
  if (error.kind === "conflict") return "this payment is still being created; wait a moment and press Pay again";
  if (error.kind === "unprocessable")
    return "this form was already sent with other details; check them and press Pay again";
  return error.message;
}

/** 303: the browser follows with a GET, so reloading the checkout resubmits nothing. */
const redirect = (location: string) =>
  new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
