import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Elysia } from "elysia";
import { publicCors } from "../checkout/cors.ts";
import { PublicPaymentParams } from "../checkout/public-routes.ts";
import { publicPaymentView } from "../checkout/public-view.ts";
import type { AppContext } from "../context.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import { amountDue, x402Url } from "../payments/view.ts";
import { CHAIN_LIMIT, READ_LIMIT } from "../rate-limits/index.ts";
import { decodeHeader, encodeHeader, PAYMENT_REQUIRED, PAYMENT_RESPONSE, PAYMENT_SIGNATURE } from "./headers.ts";
import { PaymentPayloadSchema } from "./protocol.ts";

const payloadCheck = TypeCompiler.Compile(PaymentPayloadSchema);

type Set = { status?: number | string; headers: Record<string, string | number> };

/**
 * `{base}/api/public/payments/{id}/x402`: every payment as an x402 resource (transports-v2/http.md).
 * Without PAYMENT-SIGNATURE: 402 with PAYMENT-REQUIRED for the amount due. With it: the
 * authorization is verified and sent by the relayer, and the answer waits (bounded) for the
 * transfer: 200 with PAYMENT-RESPONSE and the public view, 402 again with the reason, or 202
 * while it is still on its way. Nothing due: 200 with the public view. CORS as every public route.
 */
export function x402PublicRoutes(ctx: AppContext) {
  const handle = async (id: string, request: Request, set: Set) => {
    const row = await ctx.payments.findPublic(id);
    if (!row) throw new NotFoundError("no such payment");
    const signature = request.headers.get(PAYMENT_SIGNATURE);
    await ctx.rateLimiter.take(`${signature ? "chain" : "read"}:${row.id}`, signature ? CHAIN_LIMIT : READ_LIMIT);
    const view = async () => {
      const fresh = (await ctx.payments.findPublic(row.id)) ?? row;
      return publicPaymentView(fresh, await ctx.publicExtras(fresh), ctx.view);
    };
    if (amountDue(row) === 0n) return view();
    // An authorization already on its way: what it pays is not credited yet, and asking again would pay twice.
    if (await ctx.x402.pay.inFlight(row)) {
      set.status = 202;
      return view();
    }
    const url = x402Url(row.id, ctx.view);
    if (!signature) {
      const required = await ctx.x402.pay.required(row, url, "PAYMENT-SIGNATURE header is required");
      set.status = 402;
      set.headers[PAYMENT_REQUIRED] = encodeHeader(required);
      return required;
    }
    const payload = decodeHeader(signature);
    if (!payloadCheck.Check(payload))
      throw new ValidationError("PAYMENT-SIGNATURE must be base64 of an x402 version 2 PaymentPayload");
    const outcome = await ctx.x402.pay.pay(row, url, payload);
    if (outcome.kind === "refused") {
      set.status = 402;
      set.headers[PAYMENT_REQUIRED] = encodeHeader(outcome.required);
      if (outcome.response) set.headers[PAYMENT_RESPONSE] = encodeHeader(outcome.response);
      return outcome.required;
    }
    if (outcome.kind === "paid") set.headers[PAYMENT_RESPONSE] = encodeHeader(outcome.response);
    else set.status = 202;
    return view();
  };

  return new Elysia()
    .use(publicCors)
    .get("/api/public/payments/:id/x402", ({ params, request, set }) => handle(params.id, request, set), {
      params: PublicPaymentParams,
    })
    .post("/api/public/payments/:id/x402", ({ params, request, set }) => handle(params.id, request, set), {
      params: PublicPaymentParams,
    });
}
