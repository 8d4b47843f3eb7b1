import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { decoded, instantParam, oneOfParam } from "../http/query.ts";
import { csvFileName, paymentsCsvStream } from "./csv.ts";
import { MAX_SEARCH_LENGTH, type PaymentFilter, type PaymentSearch } from "./search.ts";
import { PAYMENT_STATUSES } from "./store.ts";

export const ExportQuery = Type.Object(
  {
    status: Type.Optional(oneOfParam("status", PAYMENT_STATUSES)),
    "created[gte]": Type.Optional(instantParam("created[gte]")),
    "created[lt]": Type.Optional(instantParam("created[lt]")),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_SEARCH_LENGTH,
        error:
          "q must be a payment id, reference, invoice number or customer email " +
          `of 1 to ${MAX_SEARCH_LENGTH} characters`,
      }),
    ),
  },
  { additionalProperties: true },
);

/** GET /api/v1/payments.csv: every payment the list's filters match, as a CSV download. */
export function paymentExportRoutes(ctx: AppContext, authed: AuthPlugin) {
  return new Elysia().use(authed).get(
    "/api/v1/payments.csv",
    ({ account, query: text }) => {
      const query = decoded(ExportQuery, text);
      return paymentsCsvResponse(
        ctx.paymentSearch,
        account.id,
        {
          status: query.status,
          createdGte: query["created[gte]"],
          createdLt: query["created[lt]"],
          search: query.q,
        },
        ctx.clock.now(),
      );
    },
    { query: ExportQuery },
  );
}

/** The export as a streamed attachment, for the API and the dashboard alike. */
export function paymentsCsvResponse(
  search: PaymentSearch,
  accountId: string,
  filter: PaymentFilter,
  now: number,
): Response {
  return new Response(paymentsCsvStream(search.exportBatches(accountId, filter)), {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${csvFileName(now)}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}
