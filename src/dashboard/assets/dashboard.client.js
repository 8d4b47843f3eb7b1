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
