import { type Static, Type } from "@sinclair/typebox";
import { EXACT_DECIMAL_PATTERN } from "../lib/money.ts";
import { optional, PAYMENT_FIELDS } from "../payments/schema.ts";

/** An address as the request sends it; its checksum and what it may be are the service's rules. */
export const AddressField = Type.String({
  maxLength: 64,
  pattern: "^0x[0-9a-fA-F]{40}$",
  rule: "must be a 0x address of 40 hex digits",
});

/** The create-refund request. A 400 says "<field> <rule>" (src/http/validate.ts). */
export const CreateRefundSchema = Type.Object(
  {
    amount: optional(
      Type.String({
        pattern: EXACT_DECIMAL_PATTERN,
        rule: 'must be a decimal string with two to six decimals, such as "12.50"',
      }),
    ),
    reason: PAYMENT_FIELDS.description,
    metadata: PAYMENT_FIELDS.metadata,
    refund_address: optional(AddressField),
  },
  { additionalProperties: false },
);

export type CreateRefundInput = Static<typeof CreateRefundSchema>;
