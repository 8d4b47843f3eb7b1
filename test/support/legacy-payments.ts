/**
 * Payments as an older build issued them, for the tests of what still has to work for them: the
 * server now gives every new payment a version 3 deposit address, while payments of earlier
 * builds keep their version 1 address (the settlement chain only) for ever.
 *
 *   const payment = await asVersion1(stack, await stack.createPayment({ amount: "5.00" }));
 */
import type { Address, Hex } from "viem";
import { depositAddress } from "../../src/chain/contracts.ts";
import { sql } from "../../src/db/engine.ts";
import type { Stack } from "./stack.ts";

type Row = { id: string; token_address: string; payout_address: string; fee_recipient: string; fee_bps: number };

/**
 * Rewrites a payment nothing was paid to yet into the version 1 payment an older build would
 * have issued on the same terms: its version 1 deposit address, and none of the later terms.
 * Returns the payment as the API now shows it.
 */
export async function asVersion1(stack: Stack, payment: { id: string }): Promise<any> {
  const [row] = await stack.sql<Row>(
    sql`SELECT id, token_address, payout_address, fee_recipient, fee_bps FROM payments WHERE id = ${payment.id}`,
  );
  if (!row) throw new Error(`no payment ${payment.id}`);
  const deposit = depositAddress({
    paymentId: row.id as Hex,
    token: row.token_address as Address,
    payout: row.payout_address as Address,
    feeRecipient: row.fee_recipient as Address,
    feeBps: Number(row.fee_bps),
  });
  await stack.sql(
    sql`UPDATE payments SET factory_version = 1, deposit_address = ${deposit}, settlement_domain = NULL,
         token_messenger = NULL, max_bridge_fee_bps = NULL, fast_domains = NULL WHERE id = ${row.id}`,
  );
  return stack.getPayment(row.id);
}
