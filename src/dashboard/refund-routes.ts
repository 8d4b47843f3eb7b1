import type { Account } from "../accounts/service.ts";
import type { ExplorerLinks } from "../chain/explorer.ts";
import type { AppContext } from "../context.ts";
import { qrSvg } from "../html/qr.ts";
import type { Raw } from "../html/template.ts";
import { statusOf } from "../http/errors.ts";
import { bodyValidator } from "../http/validate.ts";
import { asSentence, DomainError, UnprocessableError } from "../lib/errors.ts";
import type { PaymentRow } from "../payments/store.ts";
import { CreateRefundSchema } from "../refunds/schema.ts";
import { claimUrl, paymentInstructions } from "../refunds/view.ts";
import type { Notice } from "./admin-page.ts";
import type { DashboardRoute, DashboardSession } from "./kit.ts";
import { seeOther } from "./kit.ts";
import { notFoundPage } from "./layout.ts";
import { NONCE, newNonce } from "./new-payment-form.ts";
import { type RefundFormValues, refundNotice, refundsCard } from "./payment-detail-refunds.ts";

const createRefundBody = bodyValidator(CreateRefundSchema);

/** What the refunds card shows besides the payment's refunds: a notice, and the form as typed. */
export interface RefundCardState {
  notice?: Notice;
  values?: RefundFormValues;
  nonce?: string;
  /** A refund of this payment named by `?refund=`: its notice comes from its stored record. */
  refundId?: string;
}

/** The payment page, answered with the refunds card in `refunds` state (payment-detail-routes.ts). */
export type PaymentPage = (
  session: DashboardSession,
  paymentId: string,
  refunds: RefundCardState,
  status: number,
) => Promise<Response>;

/**
 * The refund form's actions: create a refund of a payment and cancel an unpaid one. Each answers
 * with a 303 back to the payment page (which names the refund, for its notice), or the page with
 * the reason and what was typed, nothing stored.
 */
export function refundRoutes(ctx: AppContext, page: PaymentPage): DashboardRoute[] {
  const accountOf = (session: DashboardSession): Promise<Account | null> => ctx.accounts.findAccount(session.accountId);
  return [
    {
      method: "POST",
      path: "/dashboard/payments/:id/refunds",
      handle: async ({ session, params, form }) => {
        const account = await accountOf(session);
        const paymentId = params.id ?? "";
        if (!account) return paymentNotFound(session);
        const values: RefundFormValues = {
          amount: (form.get("amount") ?? "").trim(),
          reason: (form.get("reason") ?? "").trim(),
          refund_address: (form.get("refund_address") ?? "").trim(),
        };
        const nonce = form.get("nonce") ?? "";
        if (!NONCE.test(nonce)) {
          const notice = { tone: "bad", text: "This form is incomplete; check the values and submit again." } as const;
          return page(session, paymentId, { notice, values }, 400);
        }
        try {
          const body = createRefundBody({
            ...(values.amount ? { amount: values.amount } : {}),
            ...(values.reason ? { reason: values.reason } : {}),
            ...(values.refund_address ? { refund_address: values.refund_address } : {}),
          });
          // The form's nonce is its idempotency key: a double submit answers with the refund the first made.
          const created = await ctx.idempotency.run(
            account.id,
            `dashboard-refund:${nonce}`,
            { payment: paymentId, ...body },
            async (commit) => {
              const row = await ctx.refunds.create(account, paymentId, body, null, (row) =>
                commit(201, ctx.refunds.json(row)),
              );
              return { status: 201, body: ctx.refunds.json(row) };
            },
          );
          const { id } = JSON.parse(created.body) as { id: string };
          return seeOther(`/dashboard/payments/${paymentId}?refund=${id}#refund-${id}`);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          if (error.kind === "not_found") return paymentNotFound(session);
          // Submitted before with other values (back, edit, submit): that refund exists; these make
          // another only when submitted again, with a fresh nonce.
          const text =
            error instanceof UnprocessableError
              ? "This form already created a refund with other values; submit again to create another."
              : asSentence(error.message.replace(/^refund_address\b/, "Refund address"));
          const fresh = error instanceof UnprocessableError ? newNonce() : nonce;
          return page(session, paymentId, { notice: { tone: "bad", text }, values, nonce: fresh }, statusOf(error));
        }
      },
    },
    {
      method: "POST",
      path: "/dashboard/refunds/:id/cancel",
      handle: async ({ session, params }) => {
        const account = await accountOf(session);
        const id = params.id ?? "";
        const refund = account && (await findRefund(ctx, account, id));
        if (!account || !refund) return refundNotFound(session);
        try {
          await ctx.refunds.cancel(account, id);
          return seeOther(`/dashboard/payments/${refund.payment_id}?refund=${id}#refund-${id}`);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          const notice = { tone: "bad", text: asSentence(error.message) } as const;
          return page(session, refund.payment_id, { notice }, statusOf(error));
        }
      },
    },
  ];
}

/** The payment page's refunds card for `payment`, with each refund's transfer and its QR code. */
export async function refundsCardFor(
  ctx: AppContext,
  session: DashboardSession,
  account: Account,
  payment: PaymentRow,
  explorer: ExplorerLinks | null,
  state: RefundCardState,
): Promise<Raw> {
  const view = ctx.refunds.view;
  // A payment has at most REFUNDS_PER_PAYMENT_MAX (100) refunds: one page holds them all.
  const { rows } = await ctx.refunds.list(account, { paymentId: payment.id, limit: 100 });
  const refunds = await Promise.all(
    rows.map(async (row) => {
      const instructions = paymentInstructions(row, view);
      const qr = instructions && row.status === "awaiting_payment" ? await qrSvg(instructions.uri) : null;
      return {
        row,
        claimUrl: claimUrl(row, view),
        instructions,
        qrDataUri: qr && `data:image/svg+xml;base64,${Buffer.from(qr).toString("base64")}`,
      };
    }),
  );
  const named = state.refundId ? rows.find((r) => r.id === state.refundId) : undefined;
  return refundsCard({
    session,
    paymentId: payment.id,
    received: payment.amount_received,
    refundable: (payment.amount_received ?? 0n) - payment.refund_reserved,
    refunds,
    explorer,
    nonce: state.nonce ?? newNonce(),
    notice: state.notice ?? (named && refundNotice(named)),
    values: state.values,
  });
}

async function findRefund(ctx: AppContext, account: Account, id: string) {
  try {
    return await ctx.refunds.retrieve(account, id);
  } catch (error) {
    if (error instanceof DomainError && error.kind === "not_found") return null;
    throw error;
  }
}

function paymentNotFound(session: DashboardSession): Response {
  return notFoundPage(session, {
    nav: "payments",
    title: "Payment not found",
    message: "This account has no payment with that id.",
    back: { href: "/dashboard/payments", label: "All payments" },
  });
}

function refundNotFound(session: DashboardSession): Response {
  return notFoundPage(session, {
    nav: "payments",
    title: "Refund not found",
    message: "This account has no refund with that id.",
    back: { href: "/dashboard/payments", label: "All payments" },
  });
}
