import { html, type Raw } from "../html/template.ts";
import type { ShownNetwork } from "./page-pay.ts";
import type { PublicPaymentView } from "./public-view.ts";

/**
 * A transfer's state as the payer reads it; the page script gets the same table (the bridging
 * ones are followed by the settlement chain's name).
 */
export const TRANSFER_STATES = {
  confirming: "confirming",
  received: "received",
  bridging: "received, moving to",
  bridged: "received, moved to",
} as const;

type Transfer = PublicPaymentView["incoming_transfers"][number];

/** Which of TRANSFER_STATES a transfer is in: a source-chain one goes on to the settlement chain. */
function stateOf(t: Transfer): keyof typeof TRANSFER_STATES {
  if (!t.confirmed) return "confirming";
  if (!t.bridge) return "received";
  return t.bridge.state === "minted" || t.bridge.state === "settled" ? "bridged" : "bridging";
}

/** "0x12345678…9abcde": enough to match it in a wallet's history. */
export const shortHash = (hash: string): string => `${hash.slice(0, 10)}…${hash.slice(-6)}`;

/**
 * The transfers seen for this payment, each with the network it was made on and whether it is
 * confirmed: the payer's receipt. The page script rebuilds the list the same way as it changes.
 */
export function transfersList(view: PublicPaymentView, networks: ShownNetwork[]): Raw {
  const transfers = view.incoming_transfers;
  const items = transfers.map((t) => {
    const label = networks.find((n) => n.chain === t.chain)?.label ?? t.chain;
    const explorer = view.networks.find((n) => n.chain === t.chain)?.explorer;
    const hash = explorer
      ? html`<a class="mono" href="${explorer}/tx/${t.tx_hash}">${shortHash(t.tx_hash)}</a>`
      : html`<span class="mono">${shortHash(t.tx_hash)}</span>`;
    const state = stateOf(t);
    const to = state === "bridging" || state === "bridged" ? ` ${networks[0]?.label}` : "";
    return html`<li data-chain="${t.chain}">${t.amount} USDC on ${label}
      <span class="muted">· ${TRANSFER_STATES[state]}${to}</span> ${hash}</li>`;
  });
  return html`<div class="transfers" id="transfers"${transfers.length > 0 ? "" : html` hidden`}>
    <h3>Transfers</h3>
    <ul id="transfer-list">${items}</ul>
  </div>`;
}
