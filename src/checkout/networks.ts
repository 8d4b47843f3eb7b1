import { bridgesFromSources } from "../chain/deposit-terms.ts";
import { explorerOrigin } from "../chain/explorer.ts";
import { ValidationError } from "../lib/errors.ts";
import type { PaymentRow } from "../payments/store.ts";
import { amountDue } from "../payments/view.ts";

/** A chain on which a payer may send USDC to a payment's deposit address. */
export interface PayNetwork {
  name: string;
  chainId: number;
  /** That chain's USDC: the only token credited there. */
  usdc: string;
  /** Block explorer origin; null where no public explorer knows the chain. */
  explorer: string | null;
}

/** A payment's networks: its settlement chain, then the source chains it can be paid on. */
export type Networks = [settlement: PayNetwork, ...sources: PayNetwork[]];

type NetworkRow = Pick<PaymentRow, "factory_version" | "chain_id" | "token_address" | "token_messenger">;

/**
 * The networks a payment can be paid on, the settlement chain first. A deposit address that
 * bridges (version 2 and later, issued with source chains) exists on every enabled source chain
 * too; any other only on the settlement chain, where the funds are reachable. `sources` are the
 * source chains offered now: those whose deposit factory is there, so funds sent on them can move.
 */
export function networksOf(
  row: NetworkRow,
  settlementName: string,
  sources: ReadonlyArray<{ name: string; chainId: number; usdc: string }>,
): Networks {
  const network = (name: string, chainId: number, usdc: string): PayNetwork => ({
    name,
    chainId,
    usdc,
    explorer: explorerOrigin({ name, chainId }),
  });
  const settlement = network(settlementName, row.chain_id, row.token_address);
  if (!bridgesFromSources(row)) return [settlement];
  return [settlement, ...sources.map((s) => network(s.name, s.chainId, s.usdc))];
}

/** The network named `name` (the settlement chain when absent); a 400 naming the allowed ones otherwise. */
export function networkNamed(networks: readonly PayNetwork[], name: string | undefined): PayNetwork {
  const found = name === undefined ? networks[0] : networks.find((n) => n.name === name);
  if (!found) throw new ValidationError(`chain must be one of ${networks.map((n) => n.name).join(", ")}`);
  return found;
}

/** EIP-681 request for the amount still due on `network`; wallets that read it prefill the transfer. */
export function paymentUri(row: PaymentRow, network: PayNetwork): string {
  const transfer = `ethereum:${network.usdc}@${network.chainId}/transfer`;
  return `${transfer}?address=${row.deposit_address}&uint256=${amountDue(row)}`;
}

/** The networks as the public view shows them. */
export function networksView(row: PaymentRow, networks: readonly PayNetwork[]) {
  return networks.map((n) => ({
    chain: n.name,
    chain_id: n.chainId,
    token_address: n.usdc,
    payment_uri: paymentUri(row, n),
    explorer: n.explorer,
  }));
}
