import type { Hex } from "viem";
import type { PaymentRow } from "../../payments/store.ts";

/** Cross-chain funding as the rest of the server asks for it (interface spec §4.4). */
export interface CrossChainApi {
  sources(row: PaymentRow): unknown;
  quote(row: PaymentRow, chain: string): Promise<unknown> | unknown;
  record(row: PaymentRow, chain: string, txHash: Hex): Promise<unknown> | unknown;
}
