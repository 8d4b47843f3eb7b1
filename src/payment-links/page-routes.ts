import { Elysia } from "elysia";
import { pageHeaders } from "../checkout/page.ts";
import type { AppContext } from "../http/context.ts";
import { LINK_PAY_LIMIT, READ_LIMIT } from "../http/rate-limit.ts";
import { bodyValidator } from "../http/validate.ts";
import { DomainError, type ErrorKind, TooManyRequestsError } from "../lib/errors.ts";
import { randomBase62 } from "../lib/ids.ts";
import { typedAmount } from "../lib/money.ts";
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
  page(linkBusyPage(), 429, { "retry-after": String(error.retryAfterSeconds) });

/**
 * The public page of a payment link, /l/<id>, and its form. Unknown, malformed and deactivated
 * links are the same 404 page; requests are rate-limited per link; every refusal is a page.
 */
export function linkPageRoutes(ctx: AppContext) {
  const links = ctx.paymentLinks;
  const form = (
    link: PaymentLinkRow,
    status = 200,
    entered: { error?: string; amount?: string; email?: string } = {},
  ) => page(linkPage(link, { merchantName: links.merchantName(link), nonce: randomBase62(24), ...entered }), status);

  return new Elysia()
    .get("/l/:id", ({ params }) => {
      const link = links.findActive(params.id);
      if (!link) return notFound();
      try {
        ctx.rateLimiter.take(`link:${link.id}`, READ_LIMIT);
      } catch (error) {
        if (error instanceof TooManyRequestsError) return busy(error);
        throw error;
      }
      return form(link);
    })
    .post("/l/:id", async ({ params, body }) => {
      const link = links.findActive(params.id);
      if (!link) return notFound();
      const fields = body instanceof URLSearchParams ? body : new URLSearchParams();
      const entered = { amount: fields.get("amount") ?? undefined, email: fields.get("email") ?? undefined };
      try {
        ctx.rateLimiter.take(`link-pay:${link.id}`, LINK_PAY_LIMIT);
        const input = payForm({
          nonce: fields.get("nonce") ?? "",
          amount: typedAmount(entered.amount),
          email: entered.email?.trim() || undefined,
        });
        return redirect(`/pay/${await links.pay(link.id, input)}`);
      } catch (error) {
        if (error instanceof TooManyRequestsError) return busy(error);
        if (!(error instanceof DomainError)) throw error;
        if (error.kind === "not_found") return notFound(); // deactivated meanwhile
        const status = FORM_REFUSALS[error.kind];
        if (status === undefined) throw error;
        // Refused input, or this form's nonce met again: the form again, as it was filled in,
        // with a fresh nonce and the reason. Nothing was created.
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
