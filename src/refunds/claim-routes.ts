import { Elysia } from "elysia";
import { chainLabel } from "../checkout/chain-info.ts";
import { messagePage } from "../checkout/page.ts";
import type { AppContext } from "../context.ts";
import { pageHeaders } from "../html/headers.ts";
import { clientAddressOf } from "../http/client-address.ts";
import { internalError } from "../http/errors.ts";
import { ConflictError, DomainError, TooManyRequestsError, ValidationError } from "../lib/errors.ts";
import { type RateLimit, READ_LIMIT } from "../rate-limits/index.ts";
import { claimBusyPage, claimPage, claimView } from "./claim-page.ts";
import type { RefundRow } from "./store.ts";

/**
 * Claims one client may send, across all refunds: a payer sends one or two, and fixing a typo or
 * two stays well inside.
 */
export const CLAIM_CLIENT_LIMIT: RateLimit = {
  burst: 10,
  perSecond: 1 / 60,
  message: "you have sent several refund addresses just now; wait a minute or two",
};
/** Claims on one refund, from any client: the link is the only key, so its tries are few. */
export const CLAIM_REFUND_LIMIT: RateLimit = {
  burst: 5,
  perSecond: 1 / 120,
  message: "this refund's address was tried several times just now; wait a few minutes",
};

/** The link is a capability: never cached, never indexed, never sent on as a referrer (pageHeaders). */
const CLAIM_PAGE_HEADERS = { ...pageHeaders("'self'"), "x-robots-tag": "noindex" };
/** Kept with a refusal so the payer can correct it; an address is 42 characters. */
const TYPED_MAX = 100;

const page = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...CLAIM_PAGE_HEADERS, ...headers } });
const notFound = () =>
  page(
    messagePage(
      "Refund not found",
      "This refund link is not valid. Check that you copied the whole link, or ask the merchant for a new one.",
    ),
    404,
  );
const busy = (error: TooManyRequestsError) =>
  page(claimBusyPage(error.message), 429, { "retry-after": String(error.retryAfterSeconds) });

/**
 * The payer's claim page, /refund/<token>: what is refunded and, while the refund waits for it,
 * the form that names the address (docs/refunds.md). Unknown and malformed tokens are the
 * checkout's 404; views and claims are limited per client, and claims per refund as well.
 */
export function claimRoutes(ctx: AppContext) {
  const refunds = ctx.refunds;
  const clientOf = clientAddressOf(ctx.config.trustedProxies);
  // Answered here rather than by the app's handler, which logs the path: this one holds the token.
  const failed = (error: unknown) => internalError(error, ctx.log);
  const render = async (
    row: RefundRow,
    token: string,
    status = 200,
    opts: { error?: string; address?: string } = {},
  ) => {
    const payment = (await ctx.payments.findPublic(row.payment_id))!;
    const merchant = (await ctx.accounts.findAccount(row.account_id))?.name ?? "";
    const view = claimView(row, payment, merchant, refunds.view.chainName);
    return page(claimPage(view, { action: `/refund/${token}`, ...opts }), status);
  };

  return new Elysia()
    .get("/refund/:token", async ({ params, request, server }) => {
      try {
        await ctx.rateLimiter.take(`refund-view:${clientOf(request, server)}`, READ_LIMIT);
        const row = await refunds.findByClaimToken(params.token);
        return row ? await render(row, params.token) : notFound();
      } catch (error) {
        if (error instanceof TooManyRequestsError) return busy(error);
        return failed(error);
      }
    })
    .post("/refund/:token", async ({ params, body, request, server }) => {
      const fields = body instanceof URLSearchParams ? body : new URLSearchParams();
      const typed = (fields.get("refund_address") ?? "").slice(0, TYPED_MAX);
      let row: RefundRow | null = null;
      try {
        await ctx.rateLimiter.take(`refund-claim-client:${clientOf(request, server)}`, CLAIM_CLIENT_LIMIT);
        row = await refunds.findByClaimToken(params.token);
        if (!row) return notFound();
        await ctx.rateLimiter.take(`refund-claim-refund:${row.id}`, CLAIM_REFUND_LIMIT);
        if (row.status === "awaiting_address" && fields.get("confirm") !== "yes") {
          const chain = chainLabel(refunds.view.chainName, row.chain_id);
          throw new ValidationError(
            `confirm that the address is your own wallet on ${chain} and that it can receive USDC`,
          );
        }
        await refunds.claim(params.token, typed);
        return redirect(`/refund/${params.token}`);
      } catch (error) {
        if (error instanceof TooManyRequestsError) return busy(error);
        if (!(error instanceof DomainError) || row === null) return failed(error);
        if (error.kind === "not_found") return notFound();
        if (error instanceof ValidationError)
          return await render(row, params.token, 400, { error: error.message, address: typed });
        // Given already or canceled, maybe from another tab: the page as it stands now, and why.
        if (error instanceof ConflictError)
          return await render((await refunds.findByClaimToken(params.token))!, params.token, 409, {
            error: error.message,
          });
        throw error;
      }
    });
}

/** 303: the browser follows with a GET, so reloading the page sends nothing again. */
const redirect = (location: string) =>
  new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
