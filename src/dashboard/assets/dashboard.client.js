// Stablegate dashboard: progressive enhancement only; every page works without this script.
// Copy buttons: <button data-copy="text to copy">Copy</button>.
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  try {
    await navigator.clipboard.writeText(button.getAttribute("data-copy") ?? "");
    const label = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  } catch {
    // No clipboard access (an http origin other than localhost): the text stays on the page to select.
  }
});

// detail: copy buttons that only work with this script are rendered hidden; show them now.
for (const button of document.querySelectorAll("button[data-copy][hidden]")) button.hidden = false;

// detail: the payment page reloads itself once the payment's status or received amount changes,
// read from the payment's public view every 5 s while the tab is visible.
const livePayment = document.querySelector("[data-live-payment]");
if (livePayment) {
  const id = livePayment.getAttribute("data-live-payment");
  const shown = livePayment.getAttribute("data-live-state");
  const check = async () => {
    if (document.visibilityState === "visible") {
      try {
        const res = await fetch(`/api/public/payments/${encodeURIComponent(id)}`, { cache: "no-store" });
        if (res.ok) {
          const view = await res.json();
          if (`${view.status}|${view.amount_received ?? ""}` !== shown) return location.reload();
        }
      } catch {
        // Offline for a moment: try again on the next round.
      }
    }
    setTimeout(check, 5000);
  };
  setTimeout(check, 5000);
}

// detail: "Add a row" on the new-payment form copies the last item row, emptied and renumbered
// (without the script the form offers five rows, and one more each time it comes back).
const addItem = document.querySelector("[data-add-item]");
if (addItem) {
  addItem.hidden = false;
  addItem.addEventListener("click", () => {
    const rows = document.querySelectorAll(".np-item");
    const last = rows[rows.length - 1];
    const row = last.cloneNode(true);
    const n = rows.length + 1;
    row.querySelector(".field-error")?.remove();
    for (const input of row.querySelectorAll("input")) {
      input.value = input.name === "item_quantity" ? "1" : "";
      input.removeAttribute("aria-invalid");
      input.removeAttribute("aria-describedby");
      if (input.name === "item_description") input.placeholder = `Item ${n}`;
    }
    for (const label of row.querySelectorAll(".sr-only")) label.textContent = label.textContent.replace(/\d+/, n);
    last.after(row);
    row.querySelector("input").focus();
  });
}

// detail: "Pay with wallet" on a refund awaiting payment. A wallet in this browser (EIP-6963
// discovery, else window.ethereum) connects, moves to the refund's chain and sends the exact USDC
// transfer the page names (data-calldata to data-token). Without a wallet, or without this
// script, the button stays hidden: the QR code and the figures beside it pay the same transfer.
const refundPays = document.querySelectorAll("[data-refund-pay]");
if (refundPays.length > 0) {
  const wallets = [];
  const showButtons = () => {
    for (const box of refundPays) {
      const button = box.querySelector("[data-refund-wallet]");
      if (button && wallets.length > 0 && !box.hasAttribute("data-sent")) button.hidden = false;
    }
  };
  const addWallet = (info, provider) => {
    if (!provider || typeof provider.request !== "function" || wallets.some((w) => w.info.uuid === info.uuid)) return;
    wallets.push({ info, provider });
    showButtons();
  };
  window.addEventListener("eip6963:announceProvider", (event) => {
    const d = event.detail;
    if (d?.info) addWallet(d.info, d.provider);
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  // Wallets without EIP-6963 only set window.ethereum; give announcements a moment first.
  setTimeout(() => {
    if (wallets.length === 0 && window.ethereum) addWallet({ uuid: "injected", name: "your wallet" }, window.ethereum);
    // The search is over (a wallet announcing later still shows the button): say so, for tests to wait on.
    for (const box of refundPays) box.setAttribute("data-wallet-search", "done");
  }, 400);

  const codeOf = (e) => Number(e?.code ?? e?.data?.originalError?.code ?? e?.error?.code);
  const explain = (e) => {
    if (e instanceof Error && e.name === "RefundWallet") return e.message;
    const code = codeOf(e);
    if (code === 4001) return "You declined the request in your wallet. Nothing was sent; you can try again.";
    if (code === -32002) return "Your wallet already has a request waiting. Open your wallet to approve or dismiss it.";
    const detail = String(e?.shortMessage || e?.message || "unknown error").slice(0, 160);
    return `Your wallet reported a problem (${detail}). Nothing was sent unless your wallet shows a transaction.`;
  };
  const refusal = (message) => Object.assign(new Error(message), { name: "RefundWallet" });

  for (const box of refundPays) {
    const button = box.querySelector("[data-refund-wallet]");
    const msg = box.querySelector("[data-refund-msg]");
    const say = (text, error) => {
      msg.textContent = text;
      msg.classList.toggle("error", Boolean(error));
    };
    button?.addEventListener("click", async () => {
      const wallet = wallets[0];
      if (!wallet || button.disabled) return;
      const { provider } = wallet;
      const chainId = Number(box.dataset.chainId);
      const name = wallet.info.name || "your wallet";
      button.disabled = true;
      try {
        say(`Connecting to ${name}…`);
        const accounts = await provider.request({ method: "eth_requestAccounts" });
        if (!Array.isArray(accounts) || !accounts[0])
          throw refusal("Your wallet did not share an account. Unlock it and try again.");
        const onChain = async () => Number.parseInt(await provider.request({ method: "eth_chainId" }), 16) === chainId;
        if (!(await onChain())) {
          say(`Switching ${name} to ${box.dataset.chain}…`);
          try {
            await provider.request({
              method: "wallet_switchEthereumChain",
              params: [{ chainId: `0x${chainId.toString(16)}` }],
            });
          } catch (e) {
            if (codeOf(e) === 4902)
              throw refusal(
                `Your wallet does not know ${box.dataset.chain} (chain ID ${chainId}). ` +
                  "Add it to your wallet, then try again.",
              );
            throw e;
          }
          if (!(await onChain()))
            throw refusal(`Switch your wallet to ${box.dataset.chain} (chain ID ${chainId}) and try again.`);
        }
        say(`Confirm the transfer of ${box.dataset.amount} USDC in ${name}…`);
        const hash = await provider.request({
          method: "eth_sendTransaction",
          params: [{ from: accounts[0], to: box.dataset.token, data: box.dataset.calldata, value: "0x0" }],
        });
        // Sent: nothing on this page offers to pay it again (button, QR code) or to cancel it while the
        // transfer is on its way.
        box.setAttribute("data-sent", hash);
        button.hidden = true;
        for (const form of box.closest("[data-refund]")?.querySelectorAll("form[data-refund-cancel]") ?? [])
          form.hidden = true;
        msg.classList.add("sent");
        say(`Sent, waiting for the chain: transaction ${hash}. The refund succeeds once the chain confirms it.`);
      } catch (e) {
        button.disabled = false;
        say(explain(e), true);
      }
    });
  }
}
