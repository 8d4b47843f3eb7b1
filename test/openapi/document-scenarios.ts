/**
 * The scenarios of the document operations (src/openapi/document-operations.ts): each PDF for its
 * owner, in both papers, and each refusal: a bad paper, a payment with no such document, and the
 * common ones (no key, unknown or malformed id, oversized body).
 */
import { expect } from "bun:test";
import type { OperationKey } from "../support/openapi-document.ts";
import { commonRefusals, INTERNAL, type Scenario } from "./world.ts";

export const DOCUMENT_SCENARIOS: Record<OperationKey, Scenario> = {
  "GET /api/v1/payments/{id}/invoice.pdf": {
    async run(w) {
      const op = "GET /api/v1/payments/{id}/invoice.pdf";
      const created = await w.contract.call("POST /api/v1/payments", {
        key: w.key,
        body: { amount: "3.00", invoice_number: "INV-CONTRACT-1" },
      });
      const params = { id: created.json.id };
      for (const paper of ["a4", "letter"]) {
        const pdf = await w.contract.call(op, { key: w.key, params, query: { paper } });
        expect({ paper, status: pdf.status, type: pdf.headers.get("content-type") }).toEqual({
          paper,
          status: 200,
          type: "application/pdf",
        });
      }
      expect((await w.contract.call(op, { key: w.key, params, query: { paper: "legal" } })).status).toBe(400);
      // A payment without an invoice number has no invoice.
      expect((await w.contract.call(op, { key: w.key, params: { id: w.owned.payment.id } })).status).toBe(404);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },
  "GET /api/v1/payments/{id}/receipt.pdf": {
    async run(w) {
      const op = "GET /api/v1/payments/{id}/receipt.pdf";
      const params = { id: (await w.paid()).id };
      const pdf = await w.contract.call(op, { key: w.key, params, query: { paper: "letter" } });
      expect({ status: pdf.status, type: pdf.headers.get("content-type") }).toEqual({
        status: 200,
        type: "application/pdf",
      });
      expect((await w.contract.call(op, { key: w.key, params, query: { paper: "b5" } })).status).toBe(400);
      // Not confirmed: no receipt yet.
      expect((await w.contract.call(op, { key: w.key, params: { id: w.owned.payment.id } })).status).toBe(404);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },
};
