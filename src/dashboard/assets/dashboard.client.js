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
