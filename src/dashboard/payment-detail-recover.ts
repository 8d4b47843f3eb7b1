import { formatUnits } from "viem";
import type { ExplorerLinks } from "../chain/explorer.ts";
import type { recoveryView } from "../chain/recovering/view.ts";
import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { type Notice, noticeBox } from "./admin-page.ts";
import { csrfField, type DashboardSession } from "./kit.ts";
import { short, txLink } from "./payment-detail-page.ts";

type Recovery = ReturnType<typeof recoveryView>;

/** The payment page's recovery card: its recoveries so far and the form to ask for one. */
export interface RecoverCardData {
  session: DashboardSession;
  paymentId: string;
  /** Where a recovery may be asked: the settlement chain, and the source chains for version 2 addresses. */
  chains: string[];
  recoveries: Recovery[];
  /** The explorer of a chain by name; null where none is known. */
  explorer: (chain: string) => ExplorerLinks | null;
  notice?: Notice;
  /** What was typed, kept when the request was refused. */
  values?: { chain: string; token: string };
}

export function recoverCard(data: RecoverCardData): Raw {
  const chosen = data.values?.chain ?? data.chains[0];
  const options = data.chains.map(
    (name) => html`<option value="${name}"${name === chosen ? html` selected` : ""}>${name}</option>`,
  );
  return html`<section class="card pd-card" id="pd-recover" aria-labelledby="pd-recover-title">
  <h2 id="pd-recover-title">Recover a token sent by mistake</h2>
  <p class="muted">Another token, or the chain's native coin, sent to the deposit address goes back to your payout
    address on the chain where it arrived. USDC is not recovered here: it is settled to you.</p>
  ${data.notice ? noticeBox(data.notice) : ""}
  ${data.recoveries.length === 0 ? "" : recoveriesTable(data)}
  <form class="stack pd-recover-form" method="post" action="/dashboard/payments/${data.paymentId}/recover">
    ${csrfField(data.session)}
    <div class="field">
      <label for="rc-chain">Chain</label>
      <select id="rc-chain" name="chain">${options}</select>
    </div>
    <div class="field">
      <label for="rc-token">Token address</label>
      <input id="rc-token" name="token" class="mono" value="${data.values?.token ?? ""}" autocomplete="off"
        spellcheck="false" placeholder="0x…" pattern="0x[0-9a-fA-F]{40}" maxlength="42">
      <p class="muted hint">The ERC-20 contract's address. Leave it empty for the native coin (ETH, POL, AVAX).</p>
    </div>
    <div><button class="btn" type="submit">Recover</button></div>
  </form>
</section>`;
}

/** What the page says of a recovery just asked for: only from its stored record. */
export function recoveryNotice(r: Recovery): Notice {
  const what = `${r.token ? `token ${r.token}` : "the native coin"} on ${r.chain}`;
  const prefix = `Recovery ${r.id} requested: `;
  switch (r.state) {
    case "pending":
    case "submitted":
      return {
        tone: "ok",
        text: `${prefix}${what} goes back to your payout address; its transaction is on its way, below.`,
      };
    case "succeeded":
      return { tone: "ok", text: `${prefix}${what} went back to your payout address.` };
    case "failed":
      return { tone: "bad", text: `${prefix}it failed; the reason is below.` };
  }
}

function recoveriesTable(data: RecoverCardData): Raw {
  return html`<div class="table-wrap"><table>
    <thead><tr><th>Chain</th><th>Token</th><th>State</th><th class="num">Amount</th><th>Transaction</th>
      <th>Requested</th></tr></thead>
    <tbody>${data.recoveries.map((r) => {
      const explorer = data.explorer(r.chain);
      return html`<tr><td>${r.chain}</td><td>${r.token ? address(explorer, r.token) : "native coin"}</td>
        <td><span class="badge ${BADGE[r.state]}">${r.state}</span>${
          r.error ? html` <span class="pd-wrap">${r.error}</span>` : ""
        }</td>
        <td class="num">${amount(r)}</td><td>${r.tx_hash ? txLink(explorer, r.tx_hash) : ""}</td>
        <td>${timeTag(r.created_at)}</td></tr>`;
    })}</tbody>
  </table></div>`;
}

const BADGE: Record<Recovery["state"], string> = {
  pending: "settling",
  submitted: "settling",
  succeeded: "confirmed",
  failed: "failed",
};

/** In whole tokens when the token says its decimals, else in its smallest units. */
const amount = (r: Recovery) =>
  r.amount_units === null
    ? ""
    : r.decimals === null
      ? `${r.amount_units} units`
      : formatUnits(BigInt(r.amount_units), r.decimals);

function address(explorer: ExplorerLinks | null, value: string): Raw {
  return explorer
    ? html`<a class="mono" href="${explorer.address(value)}" title="${value}">${short(value)}</a>`
    : html`<span class="mono" title="${value}">${short(value)}</span>`;
}
