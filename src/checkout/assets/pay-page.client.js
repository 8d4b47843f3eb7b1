"use strict";
// The checkout page's live layer: status polling, notices, countdown, copy buttons, the return
// to the merchant, and status messages to the widget when embedded. Works on the server-rendered
// HTML; the other page scripts reach it through window.StablegateCheckout.
(() => {
  const dataEl = document.getElementById("checkout-data");
  if (!dataEl) return;
  const boot = JSON.parse(dataEl.textContent);
  const $ = (id) => document.getElementById(id);
  const PAYABLE = ["pending", "underpaid", "expired"];
  const POLL_MS = 2500;
  const FAST_POLL_MS = 1000;
  const REDIRECT_SECONDS = 5;
  const listeners = [];
  let view = boot.view;
  let lastStatus = null;
  let timer = null;
  let failures = 0;
  let fastUntil = 0;
  let redirecting = false;
  let qrDue = view.amount_due;
  let shownTransfers = JSON.stringify(view.incoming_transfers);

  const apiPath = (rest) => `/api/public/payments/${view.id}${rest || ""}`;

  /** Fetches JSON from the public API; rejects with {status, message} on an HTTP error. */
  async function api(rest, init) {
    const res = await fetch(apiPath(rest), Object.assign({ headers: { accept: "application/json" } }, init));
    let body = null;
    try {
      body = await res.json();
    } catch (_) {
      // empty or not JSON
    }
    if (!res.ok) throw { status: res.status, message: body?.error || `The server answered ${res.status}.` };
    return { status: res.status, body: body };
  }

  function payable(v) {
    return PAYABLE.indexOf(v.status) >= 0 && v.amount_due !== "0.00";
  }

  /** Funds on their way: a transfer awaiting confirmations, or a cross-chain burn in flight. */
  function waiting(v) {
    const burning = (v.cross_chain_transfers || []).some((b) => b.state === "attesting" || b.state === "redeeming");
    return PAYABLE.indexOf(v.status) >= 0 && (burning || (v.incoming_transfers || []).some((t) => !t.confirmed));
  }

  function render(v) {
    const shown = waiting(v) ? "incoming" : v.status;
    const pill = document.querySelector(".status");
    pill.dataset.status = shown;
    const label = boot.labels[shown] || v.status;
    if ($("status-label").textContent !== label) $("status-label").textContent = label;
    // A transfer on its way to a payment that awaits it: no invitation to pay twice while it confirms.
    const confirming = v.status === "pending" && (v.incoming_transfers || []).some((t) => !t.confirmed);
    for (const el of document.querySelectorAll("[data-state]")) {
      const show =
        el.dataset.state.split(" ").indexOf(v.status) >= 0 &&
        (!el.classList.contains("methods") || (payable(v) && !confirming));
      el.hidden = !show;
    }
    $("incoming").hidden = !waiting(v);
    for (const el of document.querySelectorAll("[data-field]")) {
      const value = v[el.dataset.field];
      if (value != null && el.textContent !== String(value)) el.textContent = value;
    }
    renderReturn(v);
    renderQrs(v);
    renderTransfers(v);
    if (v.status !== lastStatus) {
      lastStatus = v.status;
      tellParent("status", { status: v.status });
    }
  }

  /** Each network's QR is a request for the amount due: drawn again when that changes. */
  function renderQrs(v) {
    if (v.amount_due === qrDue) return;
    qrDue = v.amount_due;
    for (const img of document.querySelectorAll("img[data-qr-chain]")) {
      const chain = encodeURIComponent(img.dataset.qrChain);
      img.src = apiPath(`/qr?format=eip681&chain=${chain}&due=${encodeURIComponent(v.amount_due)}`);
    }
  }

  /** As the server words it (page-transfers.ts): a source-chain transfer goes on to the settlement chain. */
  function transferState(t) {
    const words = boot.transfer_states;
    if (!t.confirmed) return words.confirming;
    if (!t.bridge) return words.received;
    const done = t.bridge.state === "minted" || t.bridge.state === "settled";
    return `${done ? words.bridged : words.bridging} ${boot.networks[0].label}`;
  }

  /** The transfers seen, each with its network and state, as the server renders them. */
  function renderTransfers(v) {
    const transfers = v.incoming_transfers || [];
    const key = JSON.stringify(transfers);
    if (key === shownTransfers) return;
    shownTransfers = key;
    const list = $("transfer-list");
    list.textContent = "";
    for (const t of transfers) {
      const network = boot.networks.find((n) => n.chain === t.chain);
      const explorer = (v.networks || []).find((n) => n.chain === t.chain)?.explorer;
      const item = document.createElement("li");
      item.dataset.chain = t.chain;
      const state = Object.assign(document.createElement("span"), {
        className: "muted",
        textContent: `· ${transferState(t)}`,
      });
      const hash = Object.assign(document.createElement(explorer ? "a" : "span"), {
        className: "mono",
        textContent: `${t.tx_hash.slice(0, 10)}…${t.tx_hash.slice(-6)}`,
      });
      if (explorer) hash.href = `${explorer}/tx/${t.tx_hash}`;
      item.append(`${t.amount} USDC on ${network ? network.label : t.chain} `, state, " ", hash);
      list.append(item);
    }
    $("transfers").hidden = transfers.length === 0;
  }

  /** Confirmed: back to success_url after a few seconds, unless inside the widget. */
  function renderReturn(v) {
    const url = v.success_url;
    const ok = v.status === "confirmed" && typeof url === "string" && /^https?:\/\//i.test(url);
    const link = $("return-link");
    link.parentElement.hidden = !ok || boot.embed;
    if (!ok || boot.embed || redirecting) return;
    link.href = url;
    redirecting = true;
    let left = REDIRECT_SECONDS;
    const note = $("redirect-note");
    const tick = () => {
      if (left <= 0) {
        note.textContent = "Taking you back now…";
        window.location.assign(url);
        return;
      }
      note.textContent = `Taking you back in ${left} s…`;
      left -= 1;
      setTimeout(tick, 1000);
    };
    tick();
  }

  /** The widget's iframe reports to the merchant page that opened it, and only to it. */
  function tellParent(type, extra) {
    if (!boot.embed || !boot.parent_origin || window.parent === window) return;
    window.parent.postMessage(
      Object.assign({ source: "stablegate", type: type, paymentId: view.id }, extra),
      boot.parent_origin,
    );
  }

  function update(next) {
    if (!next || next.id !== view.id) return;
    view = next;
    render(view);
    for (const fn of listeners) fn(view);
  }

  function netNotice(text) {
    const el = $("net-notice");
    el.textContent = text || "";
    el.hidden = !text;
  }

  async function poll() {
    clearTimeout(timer);
    let delay = Date.now() < fastUntil ? FAST_POLL_MS : POLL_MS;
    try {
      update((await api()).body);
      if (failures > 0) netNotice("");
      failures = 0;
    } catch (error) {
      failures += 1;
      delay = Math.min(2000 * failures, 10000);
      netNotice(
        error && error.status === 404
          ? "This payment can no longer be found. Check the link with the merchant."
          : `We can't reach the payment server right now. Retrying in ${Math.round(delay / 1000)} s; ` +
              "your payment is not affected.",
      );
    }
    // A confirmed payment never changes status again: stop asking.
    if (view.status !== "confirmed") timer = setTimeout(poll, delay);
  }

  function countdown() {
    const el = $("countdown");
    const show = view.status === "pending" && !waiting(view); // on its way: no clock to race
    el.hidden = !show;
    if (!show) return;
    const left = Math.max(0, Math.floor((Date.parse(view.expires_at) - Date.now()) / 1000));
    $("countdown-value").textContent = left === 0 ? "Time is up" : `Expires in ${duration(left)}`;
    el.classList.toggle("late", left < 300);
  }

  /** "3 days", "5 h 07 min", "4:05": as precise as the payer needs. */
  function duration(seconds) {
    const pad = (n) => String(n).padStart(2, "0");
    if (seconds >= 172800) return `${Math.floor(seconds / 86400)} days`;
    if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${pad(Math.floor((seconds % 3600) / 60))} min`;
    return `${Math.floor(seconds / 60)}:${pad(seconds % 60)}`;
  }

  async function copy(button) {
    const source = $(button.dataset.copy);
    const text = source.textContent.trim();
    let done = false;
    try {
      await navigator.clipboard.writeText(text);
      done = true;
    } catch (_) {
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      done = document.execCommand?.("copy");
    }
    button.textContent = done ? "Copied" : "Selected";
    $("copy-live").textContent = done ? `Copied ${text}` : "Press Ctrl+C or Cmd+C to copy";
    setTimeout(() => (button.textContent = "Copy"), 2000);
  }

  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.hidden = false;
    button.addEventListener("click", () => copy(button));
  }
  // Times in the payer's own time zone; the server wrote them in UTC.
  for (const el of document.querySelectorAll("time[data-local]")) {
    const d = new Date(el.dateTime);
    if (!Number.isNaN(d)) el.textContent = d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  // Escape inside the widget closes it, as it would on the merchant page itself; and the
  // widget sizes its frame to the content.
  // On keyup: the parent removes this frame when told, and a frame removed between a key's
  // down and up leaves its release nowhere to go.
  document.addEventListener("keyup", (event) => event.key === "Escape" && tellParent("close"));
  if (boot.embed && window.ResizeObserver) {
    new ResizeObserver(() =>
      tellParent("resize", { height: Math.ceil(document.body.getBoundingClientRect().height) }),
    ).observe(document.body);
  }

  window.StablegateCheckout = {
    boot: boot,
    get view() {
      return view;
    },
    api: api,
    update: update,
    payable: payable,
    onView: (fn) => listeners.push(fn),
    /** Polls every second for a while, after the payer sent something. */
    watchClosely() {
      fastUntil = Date.now() + 120000;
      poll();
    },
  };

  render(view);
  countdown();
  setInterval(countdown, 1000);
  if (view.status !== "confirmed") timer = setTimeout(poll, POLL_MS);
})();
