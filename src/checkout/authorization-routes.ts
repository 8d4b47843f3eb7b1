import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { publicAuthorizationView } from "../chain/authorizations/view.ts";
import type { AppContext } from "../context.ts";
import { clientAddressOf } from "../http/client-address.ts";
import { bodyValidator } from "../http/validate.ts";
import { NotFoundError } from "../lib/errors.ts";
import type { PaymentRow } from "../payments/store.ts";
import { CHAIN_LIMIT, READ_LIMIT } from "../rate-limits/index.ts";
import { publicCors } from "./cors.ts";
import { PublicPaymentParams } from "./public-routes.ts";
import { publicPaymentView } from "./public-view.ts";

const address = (name: string) =>
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", rule: `must be a 0x-prefixed 20-byte address (${name})` });
const decimal = Type.String({ pattern: "^[0-9]{1,78}$", rule: "must be a whole number as a decimal string" });

export const GaslessAuthorizationSchema = Type.Object(
  {
    authorization: Type.Object(
      {
        from: address("the payer"),
        to: address("the payment's deposit address"),
        value: decimal,
        validAfter: decimal,
        validBefore: decimal,
        nonce: Type.String({ pattern: "^0x[0-9a-fA-F]{64}$", rule: "must be a 0x-prefixed 32-byte hex nonce" }),
      },
      { additionalProperties: false },
    ),
    // 65 bytes from a wallet's key; contract wallets' signatures run longer.
    signature: Type.String({
      pattern: "^0x[0-9a-fA-F]{130,2048}$",
      rule: "must be the 0x-prefixed hex signature the wallet returned",
    }),
  },
  { additionalProperties: false },
);
const gaslessBody = bodyValidator(GaslessAuthorizationSchema);

/**
 * "Pay without gas" for the checkout and the widget (docs/gasless.md): what to sign for a payment,
 * and posting the signed EIP-3009 authorization, which the relayer submits. Public as the other
 * /api/public endpoints: the payment id is the capability, CORS open, no credentials.
 */
export function authorizationRoutes(ctx: AppContext) {
  const clientOf = clientAddressOf(ctx.config.trustedProxies);
  const find = async (id: string, kind: "read" | "chain"): Promise<PaymentRow> => {
    const row = await ctx.payments.findPublic(id);
    if (!row) throw new NotFoundError("no such payment");
    await ctx.rateLimiter.take(`${kind}:${row.id}`, kind === "read" ? READ_LIMIT : CHAIN_LIMIT);
    return row;
  };

  return new Elysia()
    .use(publicCors)
    .get(
      "/api/public/payments/:id/authorization",
      async ({ params }) => {
        const row = await find(params.id, "read");
        return await ctx.gasless.offer(row);
      },
      { params: PublicPaymentParams },
    )
    .post(
      "/api/public/payments/:id/authorization",
      async ({ params, body: raw, request, server, set }) => {
        const body = gaslessBody(raw);
        const row = await find(params.id, "chain");
        const record = await ctx.gasless.submit(row, body, clientOf(request, server));
        const fresh = (await ctx.payments.findPublic(params.id))!;
        set.status = 202;
        return {
          authorization: publicAuthorizationView(record),
          payment: publicPaymentView(fresh, await ctx.publicExtras(fresh), ctx.view),
        };
      },
      { params: PublicPaymentParams },
    );
}
