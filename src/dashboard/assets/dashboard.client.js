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
