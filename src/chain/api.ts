import type { Address, Hex } from "viem";
import type { PaymentRow } from "../payments/store.ts";
import type { ChainReadiness } from "./watching/readiness.ts";

/** What the rest of the server asks of the chain side: the routes, and /readyz. */
export interface ChainApi {
  /**
   * Records the transfers of a payer's transaction on `chain` (a chain name; the settlement
   * chain when omitted); "pending" while it is not mined or not known yet.
   */
  sync(row: PaymentRow, txHash: Hex, chain?: string): Promise<"recorded" | "pending">;
  /** Readiness of the chain connection for /readyz. */
  readiness(): Promise<{ ok: boolean; [key: string]: unknown }>;
  /** Each chain's watcher and relayer gas for /readyz, the settlement chain first; no RPC call. */
  chains(): ChainReadiness[];
  /**
   * The relayer's address and its gas balance read from the node now; the balance is null when
   * the node does not answer within `timeoutMs`, so a page showing it never waits on a dead RPC.
   */
  relayerGas(timeoutMs: number): Promise<{ address: Address; balanceWei: bigint | null }>;
}
