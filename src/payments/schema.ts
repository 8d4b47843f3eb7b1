import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { codePoints } from "../lib/code-points.ts";
import { DECIMAL_PATTERN } from "../lib/money.ts";
import { SPEEDS } from "../lib/speed.ts";

// Field rules of the create-payment request. Each carries its `rule`: a 400 says "<field> <rule>".
export const optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** A string of `min` to `max` characters (code points); maxLength bounds the pattern's work. */
const text = (
  min: number,
  max: number,
  rule = `must be a string of ${min > 0 ? `${min} to ` : "at most "}${max} characters`,
) => Type.String({ maxLength: 2 * max, pattern: codePoints(min, max), rule });

const decimal = Type.String({
  pattern: DECIMAL_PATTERN,
  rule: 'must be a decimal string with two decimals, such as "12.50"',
});

export const LineItemSchema = Type.Object(
  {
    description: text(1, 500),
    unit_amount: decimal,
    quantity: Type.Integer({ minimum: 1, maximum: 1_000_000, rule: "must be a whole number from 1 to 1000000" }),
  },
  { additionalProperties: false, rule: "must be an object with description, unit_amount and quantity" },
);

export const METADATA_MAX_KEYS = 50;

// A key pattern, not maxLength: TypeBox turns a Record's key schema into a pattern and drops maxLength.
export const MetadataSchema = Type.Record(Type.String({ pattern: codePoints(1, 40) }), text(0, 500), {
  maxProperties: METADATA_MAX_KEYS,
  additionalProperties: false,
  rule: `must be an object of at most ${METADATA_MAX_KEYS} keys with string values`,
  keyRule: "must be 1 to 40 characters",
});

/** Fields payment links take too, rule for rule (src/payment-links/schema.ts). */
export const PAYMENT_FIELDS = {
  amount: optional(decimal),
  line_items: optional(
    Type.Array(LineItemSchema, { minItems: 1, maxItems: 50, rule: "must be a list of 1 to 50 items" }),
  ),
  description: optional(text(0, 500)),
  success_url: optional(Type.String({ maxLength: 2048, rule: "must be an https URL of at most 2048 characters" })),
  customer_email: optional(
    Type.String({
      maxLength: 320,
      pattern: "^[^\\s@]+@[^\\s@]+$",
      rule: "must be an email address of at most 320 characters",
    }),
  ),
  metadata: optional(MetadataSchema),
};

export const CreatePaymentSchema = Type.Object(
  {
    amount: PAYMENT_FIELDS.amount,
    line_items: PAYMENT_FIELDS.line_items,
    description: PAYMENT_FIELDS.description,
    reference: optional(text(0, 500)),
    success_url: PAYMENT_FIELDS.success_url,
    customer_email: PAYMENT_FIELDS.customer_email,
    customer_name: optional(text(0, 200)),
    invoice_number: optional(text(1, 100)),
    due_at: optional(
      Type.String({
        maxLength: 64,
        rule: "must be an ISO 8601 date or date-time with a time zone, such as 2026-12-01T12:00:00Z",
      }),
    ),
    metadata: PAYMENT_FIELDS.metadata,
    speed: optional(
      Type.String({
        pattern: `^(${SPEEDS.join("|")})$`,
        rule: `must be one of ${SPEEDS.join(", ")}`,
        // Checked by pattern (validate.ts phrases a union of literals badly), documented as the enum it is.
        docAs: {
          type: "string",
          enum: [...SPEEDS],
          description:
            "The speed policy for this payment (docs/speed.md); without it, the account's, else the server's default.",
        },
      }),
    ),
  },
  { additionalProperties: false },
);

export type CreatePaymentInput = Static<typeof CreatePaymentSchema>;
export type LineItemInput = Static<typeof LineItemSchema>;
