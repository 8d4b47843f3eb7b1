"use strict";
// Pay without gas (EIP-3009): where GET .../authorization says the token takes it, each wallet
// also offers "Pay without gas". The payer signs a TransferWithAuthorization of the amount due to
// the deposit address (the server's typed data, plus `from` and a random 32-byte nonce), the page
// posts it to POST .../authorization, and the server's relayer submits it and pays the fee; the
// payment then follows its usual path. An account without ETH for a transfer's fee is told so,
// and this way leads. Joins pay-wallet.client.js through StablegateWallet.addWay.
(() => {
  const page = window.StablegateCheckout;
  const W = window.StablegateWallet;
  if (!page || !W) return;
  const $ = (id) => document.getElementById(id);
  const Friendly = W.Friendly;
  // An ERC-20 transfer to an address holding none costs about 52,000 gas; a margin above that.
  const TRANSFER_GAS = 65000n;
  const DOMAIN_FIELDS = [
    ["name", "string"],
    ["version", "string"],
    ["chainId", "uint256"],
    ["verifyingContract", "address"],
    ["salt", "bytes32"],
  ];
  let offer = null; // the last answer of GET .../authorization, null until one came
  let offerFor = null; // the amount_due and status it was asked for
  let lowGas = null; // {chainId, from, shortfall, told}: an account there cannot pay a transfer's fee
  const gasWarned = new Set(); // account@chain told once about its gas: pressing again sends anyway
  const probed = new Set();
  let following = null; // {id}: the authorization this page posted, until it succeeded or failed

  const hexAmount = (raw) => (typeof raw === "string" && /^0x[0-9a-f]+$/i.test(raw) ? BigInt(raw) : 0n);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function formatUsdc(value) {
    const fraction = (value % 1000000n)
      .toString()
      .padStart(6, "0")
      .replace(/0{1,4}$/, "");
    return `${value / 1000000n}.${fraction.padEnd(2, "0")}`;
  }

  /** "0.0003" ETH: enough digits to tell a little from none. */
  function formatEth(wei) {
    const fraction = (wei % 10n ** 18n).toString().padStart(18, "0").slice(0, 6).replace(/0+$/, "");
    return fraction ? `${wei / 10n ** 18n}.${fraction}` : (wei / 10n ** 18n).toString();
  }

  async function load() {
    const v = page.view;
    offerFor = `${v.amount_due}/${v.status}`;
    try {
      offer = (await page.api("/authorization")).body;
    } catch (_) {
      offer = null; // not offered (or not reachable now): the transfer stays
    }
    W.refresh(false);
  }

  /** A signed payment of this checkout the relayer has yet to see through (this page's, or one before a reload). */
  const inFlight = (v) => (v.authorizations || []).find((a) => a.status === "pending" || a.status === "submitted");

  // While one is in flight, a second signature would pay twice: not offered until it ends.
  const offered = (network) =>
    !!offer &&
    offer.available === true &&
    offer.chain_id === network.chain_id &&
    page.payable(page.view) &&
    !inFlight(page.view);

  /** The account's ETH on the wallet's current chain when below one transfer's fee, else null. */
  async function gasShortfall(provider, from) {
    try {
      const balance = hexAmount(await W.req(provider, "eth_getBalance", [from, "latest"]));
      const price = hexAmount(await W.req(provider, "eth_gasPrice"));
      return balance < price * TRANSFER_GAS ? { balance: balance } : null;
    } catch (_) {
      return null; // a wallet that cannot say: let it try
    }
  }

  const has = (shortfall) =>
    shortfall.balance === 0n ? "has no ETH" : `has only ${formatEth(shortfall.balance)} ETH, probably too little,`;

  /** What a payer without gas can do instead: pay without it, or why not (the endpoint's words) and what else. */
  function instead(network, clicked) {
    if (offered(network)) {
      return clicked
        ? "Pay without gas instead: you sign the payment in your wallet, and the fee is paid for you."
        : "You can still pay: choose “Pay without gas” and sign in your wallet; the fee is paid for you.";
    }
    // Why not, in the endpoint's words ("Payments without gas start at 1.00 USDC; ...").
    const why = offer && offer.chain_id === network.chain_id && offer.reason ? String(offer.reason) : "";
    const ways =
      "add a little ETH to the account, or send the USDC from another wallet or an exchange to the address below.";
    return why ? `${why.replace(/\.?$/, ".")} For a transfer, ${ways}` : `To pay, ${ways}`;
  }

  /** Before a transfer: an account that cannot pay its fee is told so, and what to do instead (once). */
  async function beforeTransfer(wallet, network, from) {
    const key = `${from.toLowerCase()}@${network.chain_id}`;
    if (gasWarned.has(key)) return;
    W.say(`Checking your ETH for the network fee on ${network.label}…`);
    const shortfall = await gasShortfall(wallet.provider, from);
    if (!shortfall) return;
    gasWarned.add(key);
    lowGas = { chainId: network.chain_id, from: from, shortfall: shortfall, told: true }; // the message says it
    throw new Friendly(
      `This account ${has(shortfall)} on ${network.label} for the network fee, so a transfer cannot go through. ` +
        instead(network, true) +
        (shortfall.balance === 0n ? "" : " To try the transfer anyway, press it again."),
    );
  }

  /**
   * Before any click: an account the wallet already shares (eth_accounts asks nothing of the
   * payer), on the picked network, without the ETH for a fee, makes this way lead.
   */
  async function probeGas(network, wallets) {
    for (const wallet of wallets) {
      const key = `${wallet.info.uuid}@${network.chain_id}`;
      if (lowGas !== null) return;
      if (probed.has(key)) continue;
      probed.add(key);
      try {
        const accounts = await W.req(wallet.provider, "eth_accounts");
        const from = Array.isArray(accounts) ? accounts[0] : null;
        if (typeof from !== "string") continue;
        if (parseInt(await W.req(wallet.provider, "eth_chainId"), 16) !== network.chain_id) continue;
        const shortfall = await gasShortfall(wallet.provider, from);
        if (!shortfall || lowGas !== null) continue;
        lowGas = { chainId: network.chain_id, from: from, shortfall: shortfall, told: false };
        W.refresh(false);
      } catch (_) {
        // a wallet that cannot say: both ways stay as they are
      }
    }
  }

  /**
   * The hint, or instead the account's lack of gas and what to do (also where paying without gas
   * is refused, in the endpoint's words); neither once the payment is sent.
   */
  function rendered(network, wallets, sent) {
    // Nothing to suggest while one is on its way: the page follows it.
    const live = wallets.length > 0 && !sent && page.payable(page.view) && !inFlight(page.view);
    const here = live && lowGas !== null && lowGas.chainId === network.chain_id; // said once, here or in a message
    const low = here && !lowGas.told;
    const notice = $("gas-notice");
    notice.textContent = low
      ? `Your account ${W.short(lowGas.from)} ${has(lowGas.shortfall)} on ${network.label} to pay a network fee. ` +
        instead(network, false)
      : "";
    notice.hidden = !low;
    $("gasless-hint").hidden = !live || here || !offered(network);
    // Once the server has answered for this network, whether or not it offers the signature.
    if (live && lowGas === null && offer && offer.chain_id === network.chain_id) probeGas(network, wallets);
  }

  function nonce() {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    return `0x${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  }

  /** The server's typed data as eth_signTypedData_v4 takes it: EIP712Domain listed, `from` and a nonce added. */
  function typedData(typed, from) {
    const types = Object.assign({}, typed.types);
    if (!types.EIP712Domain) {
      types.EIP712Domain = DOMAIN_FIELDS.filter(([name]) => typed.domain[name] !== undefined).map(([name, type]) => ({
        name: name,
        type: type,
      }));
    }
    const m = typed.message;
    const message = {
      from: from,
      to: m.to,
      value: String(m.value),
      validAfter: String(m.validAfter),
      validBefore: String(m.validBefore),
      nonce: nonce(),
    };
    return { types: types, domain: typed.domain, primaryType: "TransferWithAuthorization", message: message };
  }

  /** The server's refusal in its own words. */
  const refused = (e) => new Friendly(`${String(e.message).replace(/\.?$/, ".")} Nothing was paid.`);

  /** Prepare, take fresh typed data, sign, post: what the server accepted, or null if abandoned. */
  async function send(wallet, network, alive) {
    const ready = await W.prepare(wallet, network, alive);
    if (!ready) return null;
    W.say("Preparing the payment for you to sign…");
    let fresh;
    try {
      fresh = (await page.api("/authorization")).body; // its validity window starts now
    } catch (e) {
      throw e?.status ? refused(e) : new Friendly("We can't reach the payment server right now. Try again.");
    }
    if (!alive()) return null;
    if (!fresh.available) {
      throw new Friendly(
        fresh.reason || "Paying without gas is not offered for this payment now; pay with a transfer.",
      );
    }
    const typed = fresh.typed_data;
    if (String(typed.message.to).toLowerCase() !== page.view.deposit_address.toLowerCase()) {
      throw new Friendly("This payment changed while you were paying. Reload the page and try again.");
    }
    const data = typedData(typed, ready.from);
    const amount = formatUsdc(BigInt(data.message.value));
    W.say(
      `Sign the payment of ${amount} USDC in ${ready.name}. Signing costs nothing; the network fee is paid for you.`,
    );
    let signature;
    try {
      signature = await W.req(wallet.provider, "eth_signTypedData_v4", [ready.from, JSON.stringify(data)]);
    } catch (e) {
      // 4200 (EIP-1193) or -32601 (JSON-RPC): the wallet does not sign typed data at all.
      if (e && (Number(e.code) === 4200 || Number(e.code) === -32601)) {
        throw new Friendly(`${ready.name} cannot sign a payment without gas. Nothing was paid; pay with a transfer.`);
      }
      throw e; // declined and the rest: as for a transfer
    }
    if (!alive()) return null; // cancelled: the signature never leaves this page, so nothing moves
    if (typeof signature !== "string" || !/^0x[0-9a-f]+$/i.test(signature)) {
      throw new Friendly("Your wallet did not return a signature. Nothing was paid; you can try again.");
    }
    W.say("Sending your signed payment…");
    const body = await post({ authorization: data.message, signature: signature });
    return { due: page.view.amount_due, authorization: body.authorization, payment: body.payment };
  }

  /** Posts the signed authorization; the same one again after a network failure (the server takes it once). */
  async function post(body) {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await page.api("/authorization", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(body),
        });
        return res.body || {};
      } catch (e) {
        if (e?.status && e.status < 500) throw refused(e);
        if (attempt >= 3) {
          throw new Friendly(
            "We could not hand your signed payment to the payment server. If it arrived, this page updates " +
              "by itself; otherwise try again in a moment.",
          );
        }
      }
      await sleep(1000 * (attempt + 1));
    }
  }

  /** Where the authorization stands, in words; a failure offers the ways to pay again. */
  function show(a) {
    if (!a) return;
    const error = a.error || a.failure?.message;
    if (a.status === "failed") {
      following = null;
      W.say(`${error || "The signed payment could not be submitted."} Nothing was paid; you can try again.`, "error");
      load().then(() => W.refresh(true));
    } else if (a.status === "succeeded") {
      following = null;
      W.say("Payment received. It is being confirmed; this page updates by itself.");
    } else if (a.status === "submitted" && a.tx_hash) {
      W.say(`Your payment is on its way (transaction ${W.short(a.tx_hash)}). Waiting for the network to include it…`);
    } else {
      W.say("Signed. Your payment is being submitted to the network for you; this page updates by itself.");
    }
  }

  function follow(sent) {
    following = { id: sent.authorization ? sent.authorization.id : null };
    show(sent.authorization);
    if (sent.payment) page.update(sent.payment);
    page.watchClosely();
  }

  page.onView((v) => {
    const flying = inFlight(v);
    if (!following && flying) following = { id: flying.id };
    if (following) {
      const list = v.authorizations || [];
      show(following.id ? list.find((a) => a.id === following.id) : list[list.length - 1]);
    }
    if (`${v.amount_due}/${v.status}` !== offerFor && page.payable(v)) load();
  });

  W.addWay({
    offered: offered,
    leads: (network) => offered(network) && lowGas !== null && lowGas.chainId === network.chain_id,
    beforeTransfer: beforeTransfer,
    rendered: rendered,
    send: send,
    follow: follow,
  });
  const flying = inFlight(page.view);
  if (flying) {
    following = { id: flying.id };
    show(flying);
  }
  if (page.payable(page.view)) load();
})();
