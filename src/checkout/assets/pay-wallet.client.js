"use strict";
// Pay from a browser wallet: EIP-6963 discovery (else window.ethereum), connect, switch or add
// the chosen network's chain, check the USDC balance there, send transfer(deposit address,
// amount due) to that chain's USDC, then /sync naming the network. Other ways to pay from the
// wallet (pay-gasless.client.js: a signature instead of a transaction) join through addWay.
// The ERC-20 calldata is encoded by hand: selector + two 32-byte words.
(() => {
  const page = window.StablegateCheckout;
  if (!page) return;
  const $ = (id) => document.getElementById(id);
  const boot = page.boot;
  const networks = boot.networks;
  const TRANSFER = "0xa9059cbb";
  const BALANCE_OF = "0x70a08231";
  const wallets = [];
  let flow = 0; // bumped by every start and cancel: an abandoned flow stays silent
  let busy = false;
  let sentFor = null; // amount_due when this page last sent a payment
  let lastUsed = null;
  let otherWay = null; // the gasless way, once its script has joined (addWay)
  let drawn = false; // the wallets have been looked for (announced, or the legacy wait is over)

  class Friendly extends Error {}

  const req = (provider, method, params) =>
    provider.request(params ? { method: method, params: params } : { method: method });
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const word = (hex) => hex.replace(/^0x/, "").toLowerCase().padStart(64, "0");
  const short = (hash) => `${hash.slice(0, 10)}…${hash.slice(-6)}`;

  function units(decimal) {
    const parts = String(decimal).split(".");
    return BigInt(parts[0]) * 1000000n + BigInt((parts[1] || "").padEnd(6, "0").slice(0, 6));
  }

  function formatUnits(value) {
    let fraction = (value % 1000000n).toString().padStart(6, "0");
    while (fraction.length > 2 && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
    return `${(value / 1000000n).toString()}.${fraction}`;
  }

  function errorCode(e) {
    if (!e) return undefined;
    if (e.code !== undefined) return Number(e.code);
    const inner = e.data?.originalError || e.error;
    return inner && inner.code !== undefined ? Number(inner.code) : undefined;
  }

  /** A plain-language message for anything a wallet can throw. */
  function explain(e) {
    if (e instanceof Friendly) return e.message;
    const code = errorCode(e);
    if (code === 4001)
      return "You declined the request in your wallet. Nothing was sent; you can try again when you are ready.";
    if (code === 4100)
      return "Your wallet has not allowed this page to use your account. Unlock the wallet, connect, and try again.";
    if (code === 4900 || code === 4901)
      return "Your wallet is disconnected from the network. Reconnect it and try again.";
    if (code === -32002) return "Your wallet already has a request waiting. Open your wallet to approve or dismiss it.";
    const detail = String((e && (e.shortMessage || e.message)) || "unknown error").slice(0, 160);
    return (
      `Your wallet reported a problem (${detail}). Nothing was sent unless your wallet shows a transaction. ` +
      "Try again, or send the USDC yourself below."
    );
  }

  const hexAmount = (raw) => (typeof raw === "string" && /^0x[0-9a-f]+$/i.test(raw) ? BigInt(raw) : 0n);

  /** The other way is offered on this network, for what is due now. */
  const otherOffered = (network) => !!otherWay && otherWay.offered(network);

  function say(text, kind) {
    const el = $("wallet-msg");
    el.textContent = text;
    el.classList.toggle("error", kind === "error");
  }

  /** Moves the wallet to `chainId`, adding the chain when the wallet does not know it (4902). */
  async function ensureChain(provider, chainId, addParams, label) {
    const want = `0x${Number(chainId).toString(16)}`;
    const same = (id) => typeof id === "string" && parseInt(id, 16) === Number(chainId);
    if (same(await req(provider, "eth_chainId"))) return;
    const wrong = [
      `Your wallet is on another network. This payment needs ${label};`,
      "switch your wallet to it and try again.",
    ].join(" ");
    try {
      await req(provider, "wallet_switchEthereumChain", [{ chainId: want }]);
    } catch (e) {
      if (errorCode(e) === 4001) throw new Friendly(wrong);
      if (errorCode(e) !== 4902) throw e;
      if (!addParams)
        throw new Friendly(
          `Your wallet does not know ${label} (chain ID ${chainId}). Add that network to your wallet, then try again.`,
        );
      await req(provider, "wallet_addEthereumChain", [addParams]);
    }
    if (!same(await req(provider, "eth_chainId"))) throw new Friendly(wrong);
  }

  async function connect(wallet) {
    lastUsed = wallet;
    watchDisconnect(wallet.provider);
    const accounts = await req(wallet.provider, "eth_requestAccounts");
    if (!Array.isArray(accounts) || !accounts[0])
      throw new Friendly("Your wallet did not share an account. Unlock it and try again.");
    return accounts[0];
  }

  /** Waits for a transaction to be mined; rejects when it reverted. */
  async function waitForReceipt(provider, hash) {
    for (let i = 0; i < 120; i++) {
      const receipt = await req(provider, "eth_getTransactionReceipt", [hash]);
      if (receipt && receipt.status === "0x1") return receipt;
      if (receipt && receipt.status === "0x0")
        throw new Friendly(`Transaction ${short(hash)} failed on chain. No USDC moved; you can try again.`);
      await sleep(1500);
    }
    throw new Friendly(
      `Transaction ${short(hash)} is taking long to be mined. Check it in your wallet before trying again.`,
    );
  }

  /** The plain transfer: sent from the wallet, then reported with /sync. */
  const transferWay = { send: send, follow: (sent, network) => submitted(sent.hash, network) };

  /** Runs one way of paying from `wallet`: its send step may be cancelled; once sent, it is followed. */
  async function pay(wallet, way) {
    if (busy) return;
    const run = ++flow;
    const network = chosenNetwork();
    setBusy(true);
    let sent;
    try {
      sent = await way.send(wallet, network, () => run === flow);
    } catch (e) {
      if (run === flow) {
        say(explain(e), "error");
        setBusy(false);
      }
      return;
    }
    if (!sent) return; // cancelled or disconnected: already told
    // Once sent, report it even if the payer pressed Cancel meanwhile: the funds are moving.
    flow++;
    sentFor = sent.due;
    setBusy(false);
    await way.follow(sent, network);
  }

  /** The network the payer picked (the settlement chain unless the page offers others). */
  function chosenNetwork() {
    const select = $("wallet-network");
    return (select && networks.find((n) => n.chain === select.value)) || networks[0];
  }

  /**
   * What every way of paying starts with: connect, switch chain, check the USDC balance against
   * what is due. The account and what is due, or null if abandoned.
   */
  async function prepare(wallet, network, alive) {
    const name = wallet.info.name || "your wallet";
    const label = network.label;
    say(`Connecting to ${name}…`);
    const from = await connect(wallet);
    if (!alive()) return null;
    say("Checking your wallet's network…");
    await ensureChain(wallet.provider, network.chain_id, network.add_chain, label);
    if (!alive()) return null;
    const v = page.view;
    const due = units(v.amount_due);
    if (due <= 0n) throw new Friendly("There is nothing left to pay.");
    say(`Checking your USDC balance on ${label}…`);
    const raw = await req(wallet.provider, "eth_call", [
      { to: network.token_address, data: BALANCE_OF + word(from) },
      "latest",
    ]);
    const balance = hexAmount(raw);
    if (!alive()) return null;
    if (balance < due) {
      throw new Friendly(
        `This account holds ${formatUnits(balance)} USDC on ${label}, less than the ${v.amount_due} USDC due. ` +
          "Add USDC to it or choose another account, then try again.",
      );
    }
    return { from: from, name: name, due: due };
  }

  /** Prepare, check the gas, send: the transaction hash, or null if abandoned. */
  async function send(wallet, network, alive) {
    const ready = await prepare(wallet, network, alive);
    if (!ready) return null;
    const { from, name, due } = ready;
    const label = network.label;
    const v = page.view;
    // An account without ETH for the fee is told so first, and what it can do instead.
    if (otherWay) await otherWay.beforeTransfer(wallet, network, from);
    if (!alive()) return null;
    say(`Confirm the payment of ${v.amount_due} USDC on ${label} in ${name}…`);
    const tx = {
      from: from,
      to: network.token_address,
      data: TRANSFER + word(v.deposit_address) + word(due.toString(16)),
      value: "0x0",
    };
    return { hash: await req(wallet.provider, "eth_sendTransaction", [tx]), due: v.amount_due };
  }

  /** Tells the server about the transaction; 202 means "not mined yet", so ask again. */
  async function submitted(hash, network) {
    const body = { tx_hash: hash, chain: network.chain };
    say(`Payment sent (transaction ${short(hash)}). Waiting for the network to include it…`);
    page.watchClosely();
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        const res = await page.api("/sync", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        if (res.status === 200) {
          page.update(res.body);
          say("Payment received. It is being confirmed; this page updates by itself.");
          return;
        }
      } catch (e) {
        // "Not known" yet: the wallet's node may be ahead of ours. Reverted or not a payment: final.
        if (e && e.status === 422 && !/not known/i.test(e.message)) {
          sentFor = null;
          renderOptions();
          say(
            `That transaction did not pay this checkout: ${e.message} ` +
              "If your wallet shows USDC was sent, contact the merchant.",
            "error",
          );
          return;
        }
        // 503 or a network error: the transaction is still on its way, ask again.
      }
      await sleep(Math.min(1000 + attempt * 500, 4000));
    }
    say(
      `Transaction ${short(hash)} is not included yet. ` +
        "This page updates by itself once it is; there is no need to pay again. " +
        "If your wallet shows it failed, reload this page to try again.",
    );
  }

  const watched = new Set();
  function watchDisconnect(provider) {
    if (watched.has(provider) || typeof provider.on !== "function") return;
    watched.add(provider);
    const lost = () => {
      if (!busy) return;
      flow++;
      setBusy(false);
      say(
        "Your wallet disconnected. If it sent the payment, this page updates by itself; " +
          "otherwise reconnect your wallet and try again.",
        "error",
      );
    };
    provider.on("disconnect", lost);
    provider.on("accountsChanged", (accounts) => (!accounts || accounts.length === 0) && lost());
  }

  function setBusy(value) {
    busy = value;
    $("wallet-cancel").hidden = !value;
    if ($("wallet-network")) $("wallet-network").disabled = value;
    renderOptions();
  }

  function walletButton(wallet, text, way, kind, disabled) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `btn ${kind}`;
    button.disabled = disabled;
    const icon = wallet.info.icon;
    if (typeof icon === "string" && /^data:image\/(png|svg\+xml|webp|jpeg|gif);/.test(icon)) {
      const img = document.createElement("img");
      img.src = icon;
      img.alt = "";
      button.append(img);
    }
    button.append(text);
    button.addEventListener("click", () => pay(wallet, way));
    return button;
  }

  /** Each wallet's buttons: the transfer first, unless the account has no gas and a signature can pay. */
  function renderOptions() {
    const box = $("wallet-options");
    const v = page.view;
    const network = chosenNetwork();
    const what = v.status === "underpaid" ? `Pay the remaining ${v.amount_due} USDC` : `Pay ${v.amount_due} USDC`;
    const on = networks.length > 1 ? ` on ${network.label}` : "";
    const gasless = otherOffered(network);
    const leads = gasless && otherWay.leads(network);
    const disabled = busy || sentFor === v.amount_due;
    box.textContent = "";
    for (const wallet of wallets) {
      const name = wallet.info.name || "browser wallet";
      const plain = walletButton(
        wallet,
        `${what}${on} with ${name}`,
        transferWay,
        leads ? "secondary" : "primary",
        disabled,
      );
      if (!gasless) {
        box.append(plain);
        continue;
      }
      const signed = walletButton(
        wallet,
        `Pay without gas${on} with ${name}`,
        otherWay,
        leads ? "primary" : "secondary",
        disabled,
      );
      box.append(...(leads ? [signed, plain] : [plain, signed]));
    }
    if (otherWay) otherWay.rendered(network, wallets, sentFor === v.amount_due);
    drawn = true;
    $("wallet").hidden = false;
    // Only a wallet on this device pays on the picked network; the QR codes name their own.
    if ($("wallet-network-row")) $("wallet-network-row").hidden = wallets.length === 0;
    $("wallet-none").hidden = wallets.length > 0;
    $("wallet-divider").hidden = wallets.length === 0;
  }

  $("wallet-network")?.addEventListener("change", renderOptions);
  $("wallet-cancel").addEventListener("click", () => {
    flow++;
    setBusy(false);
    say("Cancelled. If your wallet still shows a request, reject it there.");
  });

  window.addEventListener("eip6963:announceProvider", (event) => {
    const d = event.detail;
    if (!d?.info || !d.provider || typeof d.provider.request !== "function") return;
    if (wallets.some((w) => w.info.uuid === d.info.uuid)) return;
    wallets.push({ info: d.info, provider: d.provider });
    renderOptions();
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  // Wallets without EIP-6963 only set window.ethereum; give announcements a moment first.
  setTimeout(() => {
    const legacy = window.ethereum;
    if (wallets.length === 0 && legacy && typeof legacy.request === "function") {
      wallets.push({ info: { uuid: "injected", name: "browser wallet" }, provider: legacy });
    }
    renderOptions();
  }, 400);
  page.onView(() => {
    if (sentFor !== null && sentFor !== page.view.amount_due) sentFor = null;
    renderOptions();
  });

  window.StablegateWallet = {
    Friendly: Friendly,
    req: req,
    explain: explain,
    ensureChain: ensureChain,
    connect: connect,
    waitForReceipt: waitForReceipt,
    /** The wallet the payer last used, else the first one found. */
    current: () => lastUsed || wallets[0] || null,
    say: say,
    short: short,
    units: units,
    prepare: prepare,
    /**
     * Another way to pay from the wallet, beside the transfer, as transferWay: send(wallet, network,
     * alive) and follow(sent, network), plus offered(network); leads(network), to come first;
     * beforeTransfer(wallet, network, from), which throws to stop a transfer; rendered(network,
     * wallets, sent), after each drawing (`sent`: what is due has been sent). One at most (pay-gasless.client.js).
     */
    addWay(way) {
      otherWay = way;
      if (drawn) renderOptions();
    },
    /** Offer again what is due (what was sent failed); or just redraw, when `again` is false. */
    refresh(again) {
      if (again) sentFor = null;
      if (drawn) renderOptions();
    },
  };
})();
