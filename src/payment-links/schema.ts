import { type Static, Type } from "@sinclair/typebox";
import { PAYMENT_FIELDS } from "../payments/schema.ts";
import { FORM_TOKEN } from "./form-token.ts";

// The create-payment-link request: the payment's own field rules, so both refuse the same input
// with the same words. A 400 says "<field> <rule>" (src/http/validate.ts).
export const CreatePaymentLinkSchema = Type.Object(
  {
    amount: PAYMENT_FIELDS.amount,
    line_items: PAYMENT_FIELDS.line_items,
    min_amount: PAYMENT_FIELDS.amount,
    max_amount: PAYMENT_FIELDS.amount,
    description: PAYMENT_FIELDS.description,
    success_url: PAYMENT_FIELDS.success_url,
    metadata: PAYMENT_FIELDS.metadata,
  },
  { additionalProperties: false },
);

export const UpdatePaymentLinkSchema = Type.Object(
  { active: Type.Boolean({ rule: "must be true or false" }) },
  { additionalProperties: false },
);

/** What a payer submits on the link's page: the amount when they choose it, and an optional email. */
export const PayThroughLinkSchema = Type.Object(
  {
    nonce: Type.String({ pattern: FORM_TOKEN.source, rule: "is missing or damaged; reload the page" }),
    amount: PAYMENT_FIELDS.amount,
    email: PAYMENT_FIELDS.customer_email,
  },
  { additionalProperties: false },
);

export type CreatePaymentLinkInput = Static<typeof CreatePaymentLinkSchema>;
export type PayThroughLinkInput = Static<typeof PayThroughLinkSchema>;
