import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { qrSvg } from "../html/qr.ts";
import { idParam } from "../http/params.ts";
import { oneOfParam } from "../http/query.ts";
import { bodyValidator } from "../http/validate.ts";
import { NotFoundError } from "../lib/errors.ts";
import { PAYMENT_ID } from "../lib/ids.ts";
import type { PaymentRow } from "../payments/store.ts";
import { CHAIN_LIMIT, READ_LIMIT } from "../rate-limits/index.ts";
import { publicCors } from "./cors.ts";
import { networkNamed, paymentUri } from "./networks.ts";
import { publicPaymentView } from "./public-view.ts";

const LIMITS = { read: READ_LIMIT, chain: CHAIN_LIMIT };

// Unknown and malformed ids answer the same body.
export const PublicPaymentParams = Type.Object({ id: idParam("id", PAYMENT_ID.source, () => "no such payment") });

// `chain` picks the network of an EIP-681 request; which names a payment takes is checked in the handler.
export const QrQuery = Type.Object(
  {
    format: Type.Optional(oneOfParam("format", ["address", "eip681"])),
    chain: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, error: "chain must be the name of a network this payment takes" }),
    ),
  },
  { additionalProperties: true },
);
// Without `chain`: the source chains; with it, a quote from that chain.
export const QuoteQuery = Type.Object(
  {
    chain: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, error: "chain must be the name of a configured source chain" }),
    ),
  },
  { additionalProperties: true },
);

const txHash = Type.String({ pattern: "^0x[0-9a-fA-F]{64}$", rule: "must be a 0x-prefixed 32-byte transaction hash" });
export const SyncSchema = Type.Object(
  {
    tx_hash: txHash,
    chain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        rule: "must be the name of the settlement chain or a source chain",
      }),
    ),
  },
  { additionalProperties: false },
);
export const CrossChainBurnSchema = Type.Object(
  {
    chain: Type.String({ minLength: 1, maxLength: 64, rule: "must be the name of a configured source chain" }),
    tx_hash: txHash,
  },
  { additionalProperties: false },
);
const syncBody = bodyValidator(SyncSchema);
const crossChainBody = bodyValidator(CrossChainBurnSchema);

/**
 * Unauthenticated endpoints the checkout page and widget call, possibly from a merchant's
 * domain: the payment id in the path is the only capability, so CORS is open and carries no
 * credentials. Unknown and malformed ids are the same 404.
 */
export function publicRoutes(ctx: AppContext) {
  /** The payment, after charging the request to its rate limit (unknown ids cost nothing to keep). */
  const find = async (id: string, kind: keyof typeof LIMITS = "read"): Promise<PaymentRow> => {
    const row = await ctx.payments.findPublic(id);
    if (!row) throw new NotFoundError("no such payment");
    await ctx.rateLimiter.take(`${kind}:${row.id}`, LIMITS[kind]);
    return row;
  };

  return (
    new Elysia()
      .use(publicCors)
      .get(
        "/api/public/payments/:id",
        async ({ params }) => {
          const row = await find(params.id);
          return publicPaymentView(row, await ctx.publicExtras(row), ctx.view);
        },
        { params: PublicPaymentParams },
      )
      .get(
        "/api/public/payments/:id/qr",
        async ({ params, query }) => {
          const row = await find(params.id);
          // The address is the same on every network; the request names one.
          const network = networkNamed(ctx.networks(row), query.chain);
          const svg = await qrSvg(query.format === "eip681" ? paymentUri(row, network) : row.deposit_address);
          return new Response(svg, { headers: { "content-type": "image/svg+xml", "cache-control": "no-cache" } });
        },
        { query: QrQuery, params: PublicPaymentParams },
      )
      .post(
        "/api/public/payments/:id/sync",
        async ({ params, body: raw, set }) => {
          const body = syncBody(raw);
          const row = await find(params.id, "chain");
          const outcome = await ctx.chain.sync(row, body.tx_hash as `0x${string}`, body.chain);
          const fresh = (await ctx.payments.findPublic(params.id))!;
          set.status = outcome === "pending" ? 202 : 200;
          return publicPaymentView(fresh, await ctx.publicExtras(fresh), ctx.view);
        },
        { params: PublicPaymentParams },
      )
      // Awaited, so a rejected quote reaches the error handler (Elysia only awaits async handlers).
      .get(
        "/api/public/payments/:id/cross-chain",
        async ({ params, query }) => {
          const row = await find(params.id, query.chain === undefined ? "read" : "chain");
          return query.chain === undefined
            ? await ctx.crossChain.sources(row)
            : await ctx.crossChain.quote(row, query.chain);
        },
        { query: QuoteQuery, params: PublicPaymentParams },
      )
      .post(
        "/api/public/payments/:id/cross-chain",
        async ({ params, body: raw, set }) => {
          const body = crossChainBody(raw);
          const row = await find(params.id, "chain");
          set.status = 202;
          return await ctx.crossChain.record(row, body.chain, body.tx_hash as `0x${string}`);
        },
        { params: PublicPaymentParams },
      )
  );
}
