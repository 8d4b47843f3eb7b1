import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import type { AuthPlugin } from "../http/auth.ts";
import { decoded, instantParam, oneOfParam } from "../http/query.ts";
import { PAYMENT_ID } from "../lib/ids.ts";
import { refundsCsvFileName, refundsCsvStream } from "./csv.ts";
import type { RefundListQuery, RefundsService } from "./service.ts";
import { REFUND_STATUSES, type RefundRow } from "./store.ts";

/** The list's filters (GET /api/v1/refunds) without its paging: the export has every match. */
export const RefundExportQuery = Type.Object(
  {
    status: Type.Optional(oneOfParam("status", REFUND_STATUSES)),
    "created[gte]": Type.Optional(instantParam("created[gte]")),
    "created[lt]": Type.Optional(instantParam("created[lt]")),
    payment: Type.Optional(Type.String({ pattern: PAYMENT_ID.source, error: "payment must be the id of a payment" })),
  },
  { additionalProperties: true },
);

/** Rows read per batch of the stream. */
const BATCH = 500;

/** GET /api/v1/refunds.csv: every refund the filters match, newest first, as a CSV download. */
export function refundExportRoutes(ctx: AppContext, authed: AuthPlugin) {
  return new Elysia().use(authed).get(
    "/api/v1/refunds.csv",
    async ({ account, query: text }) => {
      const query = decoded(RefundExportQuery, text);
      const filter = {
        paymentId: query.payment,
        status: query.status,
        createdGte: query["created[gte]"],
        createdLt: query["created[lt]"],
      };
      return new Response(refundsCsvStream(await refundBatches(ctx.refunds, account, filter)), {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="${refundsCsvFileName(ctx.clock.now())}"`,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        },
      });
    },
    { query: RefundExportQuery },
  );
}

/**
 * The account's matching refunds in batches, newest first. The first batch is read before the
 * response starts, so a filter naming another account's payment is a 404, not a broken download.
 */
async function refundBatches(
  refunds: RefundsService,
  account: Account,
  filter: Omit<RefundListQuery, "limit" | "startingAfter">,
): Promise<AsyncIterator<RefundRow[]>> {
  let page: { rows: RefundRow[]; hasMore: boolean } | null = await refunds.list(account, { ...filter, limit: BATCH });
  return {
    async next() {
      if (page === null) return { done: true, value: undefined };
      const { rows, hasMore } = page;
      page = hasMore ? await refunds.list(account, { ...filter, limit: BATCH, startingAfter: rows.at(-1)!.id }) : null;
      return rows.length === 0 ? { done: true, value: undefined } : { done: false, value: rows };
    },
  };
}
