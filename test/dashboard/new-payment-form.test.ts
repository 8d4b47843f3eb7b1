/**
 * The new-payment form as text: which rows count, how typed amounts become request amounts,
 * and which field a service message belongs beside.
 */
import { describe, expect, test } from "bun:test";
import { placeOf, readValues, toRequest } from "../../src/dashboard/new-payment-form.ts";

const form = (pairs: Array<[string, string]>) => new URLSearchParams(pairs);

describe("readValues and toRequest", () => {
  test("rows without description or price are dropped, so line_items[i] is the i-th row shown", () => {
    const values = readValues(
      form([
        ["item_description", ""],
        ["item_unit_amount", ""],
        ["item_quantity", "1"],
        ["item_description", "Mug"],
        ["item_unit_amount", "3"],
        ["item_quantity", ""],
        ["item_description", ""],
        ["item_unit_amount", "0.5"],
        ["item_quantity", "2"],
      ]),
    );
    expect(values.items).toEqual([
      { description: "Mug", unit_amount: "3", quantity: "" },
      { description: "", unit_amount: "0.5", quantity: "2" },
    ]);
    expect(toRequest(values).line_items).toEqual([
      { description: "Mug", unit_amount: "3.00", quantity: 1 },
      { description: "", unit_amount: "0.50", quantity: 2 },
    ]);
  });

  test("empty fields are left out; amounts are padded to two decimals, anything else passed as typed", () => {
    const request = toRequest(
      readValues(
        form([
          ["amount", " 25 "],
          ["reference", ""],
          ["due_at", "2027-01-31"],
        ]),
      ),
    );
    expect(request).toEqual({ amount: "25.00", due_at: "2027-01-31" });
    for (const typed of ["25.123", "-1", "1e3", "25,00", ".5"])
      expect(toRequest(readValues(form([["amount", typed]]))).amount).toBe(typed);
    const quantity = toRequest(
      readValues(
        form([
          ["item_description", "x"],
          ["item_quantity", "1.5"],
        ]),
      ),
    );
    expect((quantity.line_items as Array<{ quantity: unknown }>)[0]!.quantity).toBe("1.5");
  });
});

describe("placeOf", () => {
  test("names the field, the item row and column, or the form as a whole", () => {
    expect(placeOf("amount 30.00 USDC does not match line_items total 25.00 USDC")).toEqual({ field: "amount" });
    expect(placeOf("due_at must be in the future")).toEqual({ field: "due_at" });
    expect(placeOf("customer_email must be an email address of at most 320 characters")).toEqual({
      field: "customer_email",
    });
    expect(placeOf("line_items[3].quantity must be a whole number from 1 to 1000000")).toEqual({
      row: 3,
      column: "quantity",
    });
    expect(placeOf("line_items must be a list of 1 to 50 items")).toEqual({ field: "line_items" });
    expect(placeOf("this form is incomplete")).toEqual({ form: true });
  });
});
