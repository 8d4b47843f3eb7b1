import type { AccountsService } from "../accounts/service.ts";
import type { Authorizations } from "../chain/authorizations/types.ts";
import { publicAuthorizationView } from "../chain/authorizations/view.ts";
import type { Clock } from "../lib/clock.ts";
import type { Lifecycle } from "../payments/lifecycle.ts";
import type { PaymentRow } from "../payments/store.ts";
import type { ViewContext } from "../payments/view.ts";
import { createGasless } from "./gasless.ts";
import { type Networks, networksOf } from "./networks.ts";
import type { IncomingTransfer, PublicExtras } from "./public-view.ts";

/**
 * The checkout's part of a payment beyond its row, for the public view, the page and the widget:
 * the merchant's name, the transfers seen so far with their confirmations, the payer's burns on
 * other chains, and the networks the payer may pay on.
 */
export function createCheckout(w: {
  accounts: Pick<AccountsService, "findAccount">;
  /** The account's legal name where its business details set one (docs/documents.md), shown instead of its name. */
  legalName?: (accountId: string) => Promise<string | null> | string | null;
  lifecycle: Pick<Lifecycle, "transfersView">;
  /** What the chain side's watchers last saw. */
  chain: {
    confirmationsOf(chainId: number, blockNumber: number): number;
    offeredSources(): ReadonlyArray<{ name: string; chainId: number; usdc: string }>;
  };
  /** The payment's cross-chain burns, when cross-chain funding is on. */
  burnsOf?: (paymentId: string) => Promise<unknown[]> | unknown[];
  /** Gasless payments (src/chain/authorizations/): what "pay without gas" offers and takes. */
  authorizations: Authorizations;
  clock: Clock;
  view: ViewContext;
}) {
  const incoming = async (row: PaymentRow): Promise<IncomingTransfer[]> =>
    // What is still on the chain: a transfer a reorg took back is not the payer's to wait for.
    (await w.lifecycle.transfersView(row))
      .filter((t) => !t.reversed)
      .map((t) => ({
        chain: t.chain,
        chain_id: t.chain_id,
        tx_hash: t.tx_hash,
        amount: t.amount,
        confirmations: w.chain.confirmationsOf(t.chain_id, t.block_number),
        confirmed: t.confirmed,
        bridge: t.bridge && {
          state: t.bridge.state,
          burn_tx_hash: t.bridge.burn_tx_hash,
          mint_tx_hash: t.bridge.mint_tx_hash,
        },
      }));

  // Only source chains whose deposit factory is there: funds sent elsewhere could not move.
  const networks = (row: PaymentRow): Networks => networksOf(row, w.view.chainName, w.chain.offeredSources());

  return {
    networks,
    gasless: createGasless({ authorizations: w.authorizations, clock: w.clock, chainName: w.view.chainName }),
    publicExtras: async (row: PaymentRow): Promise<PublicExtras> => ({
      merchantName: (await w.legalName?.(row.account_id)) ?? (await w.accounts.findAccount(row.account_id))?.name ?? "",
      incoming: await incoming(row),
      crossChain: (await w.burnsOf?.(row.id)) ?? [],
      networks: networks(row),
      authorizations: (await w.authorizations.forPayment(row.id)).map(publicAuthorizationView),
    }),
  };
}

export type Checkout = ReturnType<typeof createCheckout>;
