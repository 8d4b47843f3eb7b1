import { type Static, t } from "elysia";
import { Type } from "@sinclair/typebox";

// Field rules of the create-payment request; each carries the message a merchant sees.
const DECIMAL = "^\\d+\\.\\d{2}$";
const optional = <T extends Parameters<typeof t.Nullable>[0]>(schema: T) => t.Optional(t.Nullable(schema));

export const LineItemSchema = t.Object(
  {
    description: t.String({ minLength: 1, maxLength: 500, error: "line_items: description is required, 1 to 500 characters" }),
    unit_amount: t.String({ pattern: DECIMAL, error: 'line_items: unit_amount must be a decimal string with two decimals, such as "12.50"' }),
    // Plain TypeBox: Elysia's t.Integer would coerce "2" or 2.5 silently; quantities must be whole numbers.
    quantity: Type.Integer({ minimum: 1, maximum: 1_000_000, error: "line_items: quantity must be a whole number from 1 to 1000000" }),
  },
  { additionalProperties: false, error: "line_items: each item has exactly description, unit_amount and quantity" },
);

// A key pattern, not maxLength: TypeBox turns a Record's key schema into a pattern and drops maxLength.
export const MetadataSchema = t.Record(t.String({ pattern: "^[\\s\\S]{1,40}$" }), t.String({ maxLength: 500 }), {
  maxProperties: 50,
  additionalProperties: false,
  error: "metadata must be an object of at most 50 string values, keys of 1 to 40 characters, values up to 500",
});

export const CreatePaymentSchema = t.Object(
  {
    amount: optional(t.String({ pattern: DECIMAL, error: 'amount must be a decimal string with two decimals, such as "25.00"' })),
    line_items: optional(
      t.Array(LineItemSchema, { minItems: 1, maxItems: 50, error: "line_items must be a list of 1 to 50 items" }),
    ),
    description: optional(t.String({ maxLength: 500, error: "description must be at most 500 characters" })),
    reference: optional(t.String({ maxLength: 500, error: "reference must be at most 500 characters" })),
    success_url: optional(t.String({ maxLength: 2048, error: "success_url must be an https URL of at most 2048 characters" })),
    customer_email: optional(
      t.String({ maxLength: 320, pattern: "^[^\\s@]+@[^\\s@]+$", error: "customer_email must be an email address" }),
    ),
    customer_name: optional(t.String({ maxLength: 200, error: "customer_name must be at most 200 characters" })),
    invoice_number: optional(t.String({ minLength: 1, maxLength: 100, error: "invoice_number must be 1 to 100 characters" })),
    due_at: optional(t.String({ maxLength: 64, error: "due_at must be an ISO 8601 date or date-time" })),
    metadata: optional(MetadataSchema),
  },
  { additionalProperties: false },
);

export type CreatePaymentInput = Static<typeof CreatePaymentSchema>;
export type LineItemInput = Static<typeof LineItemSchema>;
