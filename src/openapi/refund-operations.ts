import { Type } from "@sinclair/typebox";
import { PaymentParams } from "../payments/routes.ts";
import { ListPaymentRefundsQuery, ListRefundsQuery, RefundParams } from "../refunds/routes.ts";
import { CreateRefundSchema } from "../refunds/schema.ts";
import { REFUNDS_PER_PAYMENT_MAX } from "../refunds/service.ts";
import { listOf } from "./objects.ts";
import type { Operation } from "./operation.ts";
import { Refund } from "./refund-objects.ts";

export const RefundList = listOf(Refund, "RefundList");

/**
 * The export's filters: the list's, without its paging (the export holds every match). The same
 * parameter schemas as the list's, so the two read and refuse alike.
 */
export const RefundExportQuery = Type.Omit(ListRefundsQuery, ["limit", "starting_after"], {
  additionalProperties: true,
});

/** The merchant's refund routes (src/refunds/routes.ts and export-routes.ts; docs/refunds.md). */
export const REFUND_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/api/v1/payments/:id/refunds",
    operationId: "createRefund",
    tag: "Refunds",
    summary: "Refund a payment",
    description:
      "Records what is owed back; the merchant pays it from their own wallet (Stablegate never holds funds). " +
      "`amount` defaults to everything received not yet refunded; refunds not canceled never add up to more " +
      "than `amount_received`, counted from the moment each is created. Without `refund_address` the refund " +
      "waits for the payer to name one at `claim_url`; with it, it is payable at once and carries " +
      `\`payment_instructions\`. At most ${REFUNDS_PER_PAYMENT_MAX} refunds per payment, canceled ones included.`,
    auth: true,
    idempotent: true,
    params: PaymentParams,
    body: {
      name: "CreateRefundRequest",
      schema: CreateRefundSchema,
      example: { amount: "12.50", reason: "One bag returned", metadata: { rma: "1042-1" } },
    },
    responses: { 201: { description: "The refund.", schema: Refund, replayable: true } },
    errors: [400, 404, 409, 422],
  },
  {
    method: "get",
    path: "/api/v1/payments/:id/refunds",
    operationId: "listPaymentRefunds",
    tag: "Refunds",
    summary: "List a payment's refunds",
    description: "Newest first.",
    auth: true,
    params: PaymentParams,
    query: ListPaymentRefundsQuery,
    responses: { 200: { description: "A page of the payment's refunds.", schema: RefundList } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/api/v1/refunds",
    operationId: "listRefunds",
    tag: "Refunds",
    summary: "List refunds",
    description: "Newest first. `payment` naming a payment that is not the account's is a 404.",
    auth: true,
    query: ListRefundsQuery,
    responses: { 200: { description: "A page of refunds.", schema: RefundList } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/api/v1/refunds.csv",
    operationId: "exportRefunds",
    tag: "Refunds",
    summary: "Export refunds as CSV",
    description:
      "Every refund the filters match, newest first, streamed as a CSV attachment. The claim link is not in it.",
    auth: true,
    query: RefundExportQuery,
    responses: { 200: { description: "The CSV file.", mediaType: "text/csv" } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/api/v1/refunds/:id",
    operationId: "retrieveRefund",
    tag: "Refunds",
    summary: "Retrieve a refund",
    auth: true,
    params: RefundParams,
    responses: { 200: { description: "The refund.", schema: Refund } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/refunds/:id/cancel",
    operationId: "cancelRefund",
    tag: "Refunds",
    summary: "Cancel a refund",
    description:
      "While it is unpaid: what it held may be refunded again. 409 once a transfer paying it is seen on chain " +
      "(the money may be on its way), or when it has succeeded or was canceled already. A wrong address is " +
      "mended this way: cancel, then create another refund.",
    auth: true,
    idempotent: true,
    params: RefundParams,
    responses: { 200: { description: "The canceled refund.", schema: Refund, replayable: true } },
    errors: [400, 404, 409, 422],
  },
];
