import type { Account } from "../accounts/service.ts";
import { explorerFor } from "../chain/explorer.ts";
import { recoveryView } from "../chain/recovering/view.ts";
import type { AppContext } from "../context.ts";
import { qrSvg } from "../html/qr.ts";
import { statusOf } from "../http/errors.ts";
import { bodyValidator } from "../http/validate.ts";
import { asSentence, ConflictError, DomainError, UnprocessableError } from "../lib/errors.ts";
import { formatAmount } from "../lib/money.ts";
import { sleep } from "../lib/sleep.ts";
import { createPaymentOnce } from "../payments/create-once.ts";
import { CreatePaymentSchema } from "../payments/schema.ts";
import type { Notice } from "./admin-page.ts";
import type { DashboardRoute, DashboardSession } from "./kit.ts";
import { seeOther } from "./kit.ts";
import { dashboardPage, notFoundPage } from "./layout.ts";
import {
  emptyValues,
  formIdempotencyKey,
  type NewPaymentValues,
  NONCE,
  newNonce,
  readValues,
  toRequest,
} from "./new-payment-form.ts";
import { newPaymentBody } from "./new-payment-page.ts";
import { paymentDetailBody } from "./payment-detail-page.ts";
import { recoverCard, recoveryNotice } from "./payment-detail-recover.ts";
import { type RefundCardState, refundRoutes, refundsCardFor } from "./refund-routes.ts";

const createPaymentBody = bodyValidator(CreatePaymentSchema);
/** How long a second submit of a form waits for the first, still being created, before giving up. */
const IN_FLIGHT_WAIT_MS = 10_000;

/** The payment page (with its recovery and refund forms) and the new-payment form. */
export function paymentDetailRoutes(ctx: AppContext): DashboardRoute[] {
  const createOnce = createPaymentOnce(ctx);
  const accountOf = (session: DashboardSession): Promise<Account | null> => ctx.accounts.findAccount(session.accountId);
  const sourceExplorer = (name: string) => {
    const source = ctx.config.crossChain?.sources.find((s) => s.name === name);
    return source ? explorerFor(source) : null;
  };

  const form = (
    session: DashboardSession,
    values: NewPaymentValues,
    nonce: string,
    error: string | null,
    status = 200,
  ) =>
    dashboardPage({
      title: "New payment",
      session,
      nav: "new-payment",
      body: newPaymentBody({ session, values, nonce, error }),
      status,
    });

  /**
   * Creates once per form nonce. A double click sends the second submit while the first is still
   * being created (409 from the idempotency key); the browser shows only the second answer, so it
   * waits for the first and answers with the same payment.
   */
  async function createFromForm(account: Account, nonce: string, values: NewPaymentValues) {
    const body = createPaymentBody(toRequest(values));
    const key = formIdempotencyKey(nonce);
    for (let waited = 0; ; waited += 50) {
      try {
        return await createOnce(account, key, body, null);
      } catch (error) {
        if (!(error instanceof ConflictError) || waited >= IN_FLIGHT_WAIT_MS) throw error;
        await sleep(50);
      }
    }
  }

  return [
    {
      method: "GET",
      path: "/dashboard/payments/new",
      handle: ({ session }) => form(session, emptyValues(), newNonce(), null),
    },
    {
      method: "POST",
      path: "/dashboard/payments/new",
      handle: async ({ session, form: submitted }) => {
        const account = await accountOf(session);
        if (!account) return notFound(session);
        const values = readValues(submitted);
        const nonce = submitted.get("nonce") ?? "";
        if (!NONCE.test(nonce))
          return form(session, values, newNonce(), "this form is incomplete; check the values and submit again", 400);
        try {
          const created = await createFromForm(account, nonce, values);
          const { id } = JSON.parse(created.body) as { id: string };
          return seeOther(`/dashboard/payments/${id}?created=1`);
        } catch (error) {
          if (error instanceof UnprocessableError) {
            // The form was submitted before with other values (back, edit, submit): that payment
            // exists; these values make a new one only when submitted again, with a new nonce.
            const message = "this form already created a payment with other values; submit again to create another";
            return form(session, values, newNonce(), message, 422);
          }
          // Nothing was stored: the same nonce stays good for the corrected values.
          if (error instanceof DomainError) return form(session, values, nonce, error.message, 400);
          throw error;
        }
      },
    },
    {
      method: "GET",
      path: "/dashboard/payments/:id",
      // `?recovery=` and `?refund=` only name the recovery or refund the notice is about: its words
      // come from that payment's stored record, so a link can put no text of its own on the page.
      handle: ({ session, params, query }) =>
        detailPage(session, params.id ?? "", {
          created: query.get("created") === "1",
          recoveryId: query.get("recovery") ?? undefined,
          refunds: { refundId: query.get("refund") ?? undefined },
        }),
    },
    {
      method: "POST",
      path: "/dashboard/payments/:id/recover",
      handle: async ({ session, params, form: submitted }) => {
        const account = await accountOf(session);
        if (!account) return notFound(session);
        const values = { chain: submitted.get("chain") ?? "", token: (submitted.get("token") ?? "").trim() };
        try {
          const { row } = await ctx.recoveries.request(account, params.id ?? "", {
            chain: values.chain,
            token: values.token || null,
          });
          return seeOther(`/dashboard/payments/${row.payment_id}?recovery=${row.id}#pd-recover`);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          if (error.kind === "not_found") return notFound(session);
          const notice = { tone: "bad", text: asSentence(error.message) } as const;
          return detailPage(session, params.id ?? "", { notice, values }, statusOf(error));
        }
      },
    },
    ...refundRoutes(ctx, (session, id, refunds, status) => detailPage(session, id, { refunds }, status)),
  ];

  /**
   * The payment page. `notice` and `values` fill the recovery card after a refused request;
   * `recoveryId` shows the notice of one of this payment's recoveries, and nothing for any other id.
   */
  async function detailPage(
    session: DashboardSession,
    id: string,
    opts: {
      created?: boolean;
      notice?: Notice;
      values?: { chain: string; token: string };
      recoveryId?: string;
      refunds?: RefundCardState;
    },
    status = 200,
  ): Promise<Response> {
    const account = await accountOf(session);
    const detail = account && (await findDetail(ctx, account, id));
    if (!account || !detail) return notFound(session);
    const { payment } = detail;
    const payUrl = `${ctx.view.baseUrl}/pay/${payment.id}`;
    const qr = Buffer.from(await qrSvg(payUrl)).toString("base64");
    const explorer = explorerFor({ name: ctx.view.chainName, chainId: payment.chain_id });
    const recoveries = ctx.recoveries;
    const listed = (await recoveries.forPayment(account, payment.id)).map((row) =>
      recoveryView(row, recoveries.chainName(row.chain_id)),
    );
    const named = opts.recoveryId ? listed.find((r) => r.id === opts.recoveryId) : undefined;
    return dashboardPage({
      title: `Payment of ${formatAmount(payment.amount)} USDC`,
      session,
      nav: "payments",
      status,
      body: paymentDetailBody({
        detail,
        payUrl,
        chainName: ctx.view.chainName,
        explorer,
        sourceExplorer,
        qrDataUri: `data:image/svg+xml;base64,${qr}`,
        created: opts.created ?? false,
        recover: recoverCard({
          session,
          paymentId: payment.id,
          chains: recoveries.chainsFor(payment),
          recoveries: listed,
          explorer: (name) => (name === ctx.view.chainName ? explorer : sourceExplorer(name)),
          notice: opts.notice ?? (named && recoveryNotice(named)),
          values: opts.values,
        }),
        refunds: await refundsCardFor(ctx, session, account, payment, explorer, opts.refunds ?? {}),
      }),
    });
  }
}

/** The payment, or null when the account has none with this id (unknown and another's alike). */
async function findDetail(ctx: AppContext, account: Account, id: string) {
  try {
    return await ctx.paymentDetails.find(account, id);
  } catch (error) {
    if (error instanceof DomainError && error.kind === "not_found") return null;
    throw error;
  }
}

function notFound(session: DashboardSession): Response {
  return notFoundPage(session, {
    nav: "payments",
    title: "Payment not found",
    message: "This account has no payment with that id.",
    back: { href: "/dashboard/payments", label: "All payments" },
  });
}
