"use strict";
// Pay from another chain (Circle CCTP): shown only when the server lists source chains. Choose
// a chain, get a quote, pick fast or standard, send its calls (approve, then burn) from the
// wallet on that chain, and record the burn; the public view then lists it and its state.
(() => {
  const page = window.StablegateCheckout;
  const wallet = window.StablegateWallet;
  if (!page || !wallet) return;
  const $ = (id) => document.getElementById(id);
  const SPEEDS = { fast: "Fast", standard: "Standard" };
  const STATES = {
    attesting: "waiting for Circle's attestation",
    redeeming: `minting on ${page.boot.chain_label}`,
    redeemed: "arrived",
    failed: "failed",
  };
  let sources = [];
  let quote = null;
  let busy = false;

  const title = (name) =>
    String(name)
      .split("-")
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(" ");
  const hexValue = (v) => (typeof v === "string" && v.startsWith("0x") ? v : `0x${BigInt(v || 0).toString(16)}`);
  const seconds = (s) => (s >= 120 ? `about ${Math.round(s / 60)} min` : `about ${s} s`);
  const el = (tag, text) => Object.assign(document.createElement(tag), text === undefined ? {} : { textContent: text });

  function say(text, kind) {
    $("cc-msg").textContent = text;
    $("cc-msg").classList.toggle("error", kind === "error");
  }

  function clearQuote() {
    quote = null;
    $("cc-pay").hidden = true;
    $("cc-quote-out").hidden = true;
  }

  /** The quote's speeds as radio buttons; the first available one is chosen. */
  function showQuote(source, q) {
    const out = $("cc-quote-out");
    out.textContent = "";
    const fieldset = el("fieldset");
    fieldset.append(el("legend", "Speed"));
    let first = true;
    for (const speed of Object.keys(SPEEDS)) {
      const option = q[speed];
      if (!option?.available) continue;
      const input = Object.assign(el("input"), { type: "radio", name: "cc-speed", value: speed, checked: first });
      const label = el("label");
      label.append(
        input,
        ` ${SPEEDS[speed]}: send ${option.burn_amount} USDC on ${title(source.name)}, ` +
          `arrives in ${seconds(option.estimated_seconds)} (fee at most ${option.max_fee} USDC)`,
      );
      fieldset.append(label);
      first = false;
    }
    if (first)
      return say(
        `No transfer from ${title(source.name)} is possible right now. You can still pay directly above.`,
        "error",
      );
    out.append(fieldset);
    out.hidden = false;
    $("cc-pay").textContent = `Pay from ${title(source.name)} with wallet`;
    $("cc-pay").hidden = false;
  }

  async function getQuote() {
    const source = sources.find((s) => s.name === $("cc-chain").value);
    if (!source || busy) return;
    clearQuote();
    say("Getting a quote…");
    try {
      const q = (await page.api(`/cross-chain?chain=${encodeURIComponent(source.name)}`)).body;
      if (q && q.needed === false) return say(q.message || "This payment needs nothing more.");
      quote = { source: source, body: q, due: page.view.amount_due };
      say("");
      showQuote(source, q);
    } catch (e) {
      say(
        `No quote for ${title(source.name)} right now (${e.message || "try again"}). You can still pay directly above.`,
        "error",
      );
    }
  }

  async function pay() {
    const w = wallet.current();
    const chosen = document.querySelector('input[name="cc-speed"]:checked');
    if (!quote || !chosen || busy) return;
    if (!w) return say("No browser wallet found here. Install one, or pay directly above.", "error");
    const source = quote.source;
    const calls = quote.body[chosen.value].calls;
    busy = true;
    $("cc-pay").disabled = true;
    let burn = null;
    try {
      const from = await wallet.connect(w);
      say(`Switching your wallet to ${title(source.name)}…`);
      await wallet.ensureChain(w.provider, source.chain_id, null, title(source.name));
      for (let i = 0; i < calls.length; i++) {
        const step = `Step ${i + 1} of ${calls.length}${calls[i].description ? ` (${calls[i].description})` : ""}`;
        say(`${step}: confirm it in your wallet…`);
        burn = await wallet.req(w.provider, "eth_sendTransaction", [
          { from: from, to: calls[i].to, data: calls[i].data, value: hexValue(calls[i].value) },
        ]);
        say(`${step}: waiting for it to be mined…`);
        await wallet.waitForReceipt(w.provider, burn);
      }
      await record(source, burn);
    } catch (e) {
      say(wallet.explain(e), "error");
    } finally {
      busy = false;
      $("cc-pay").disabled = false;
    }
  }

  /** POSTs the burn; a failure here is retried, since the USDC has already left the wallet. */
  async function record(source, hash) {
    for (let attempt = 1; ; attempt++) {
      try {
        say("Recording the transfer…");
        await page.api("/cross-chain", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ chain: source.name, tx_hash: hash }),
        });
        clearQuote();
        say(`Transfer started. Your USDC is on its way to ${page.boot.chain_label}; this page updates by itself.`);
        page.watchClosely();
        return;
      } catch (e) {
        if (attempt >= 5 || (e && e.status >= 400 && e.status < 500)) {
          say(
            `Your transfer ${hash} was sent but could not be recorded (${e.message || "network error"}). ` +
              "Keep this page open and contact the merchant with that transaction hash.",
            "error",
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 2000 * attempt));
      }
    }
  }

  function renderTransfers(v) {
    const list = $("cc-transfers");
    const burns = Array.isArray(v.cross_chain_transfers) ? v.cross_chain_transfers : [];
    list.textContent = "";
    for (const b of burns) {
      const state = STATES[b.state] || String(b.state || "in progress");
      const what = b.amount ? `${b.amount} USDC` : "Transfer";
      const text = `${what} from ${title(b.chain)} (${String(b.tx_hash).slice(0, 10)}…): ${state}`;
      list.append(el("li", b.state === "failed" && b.error ? `${text}: ${b.error}` : text));
    }
    list.hidden = burns.length === 0;
  }

  function render(v) {
    $("crosschain").hidden = sources.length === 0 || !page.payable(v);
    if (quote && quote.due !== v.amount_due) clearQuote(); // a quote is for one amount
    renderTransfers(v);
  }

  async function load() {
    try {
      const list = (await page.api("/cross-chain")).body;
      sources = list && Array.isArray(list.data) ? list.data : [];
    } catch (_) {
      sources = []; // cross-chain is optional: without it the page works as before
    }
    for (const s of sources) $("cc-chain").append(Object.assign(el("option", title(s.name)), { value: s.name }));
    render(page.view);
  }

  $("cc-quote").addEventListener("click", getQuote);
  $("cc-pay").addEventListener("click", pay);
  $("cc-chain").addEventListener("change", clearQuote);
  page.onView(render);
  if (page.payable(page.view)) load();
})();
