"use strict";
// Stablegate checkout widget for merchant pages. Add
//   <script src="https://pay.example.com/checkout.js"></script>
// then call Stablegate.open({ paymentId, onConfirmed }) or mark a button with
// data-stablegate-payment="<payment id>". The checkout opens in an overlay holding an iframe of
// the hosted page, which keeps its own strict CSP and wallet code; the merchant page hears back
// through onConfirmed and a `stablegate:confirmed` event on document, detail {paymentId, status}.
(() => {
  if (window.Stablegate?.open) return; // the tag is on the page twice
  const script = document.currentScript;
  const ORIGIN = new URL(script?.src ? script.src : "/", location.href).origin;
  const PAYMENT_ID = /^0x[0-9a-fA-F]{64}$/;
  const CHECK_MS = 4000;
  let session = null;

  const style = (el, props) => Object.assign(el.style, props) && el;

  /** Fires the callback and the DOM event once, after the public endpoint says "confirmed". */
  async function check(s) {
    if (s.done || s.closed) return;
    try {
      const res = await fetch(`${ORIGIN}/api/public/payments/${s.paymentId}`, { credentials: "omit" });
      const view = res.ok ? await res.json() : null;
      if (view?.status !== "confirmed" || s.done) return;
      s.done = true;
      const detail = { paymentId: s.paymentId, status: view.status };
      if (typeof s.options.onConfirmed === "function") {
        try {
          s.options.onConfirmed(detail);
        } catch (error) {
          setTimeout(() => {
            throw error; // the merchant's bug, reported without breaking the event below
          });
        }
      }
      document.dispatchEvent(new CustomEvent("stablegate:confirmed", { detail: detail }));
    } catch (_) {
      // offline for a moment: the next check or message tries again
    }
  }

  /** Only the iframe we opened, from the checkout's own origin, about this payment. */
  function onMessage(event) {
    const s = session;
    const d = event.data;
    if (!s || event.origin !== ORIGIN || event.source !== s.frame.contentWindow) return;
    if (d?.source !== "stablegate" || d.paymentId !== s.paymentId) return;
    if (d.type === "status" && d.status === "confirmed") check(s);
    if (d.type === "close") close();
    if (d.type === "resize" && typeof d.height === "number" && d.height > 0) {
      s.dialog.style.height = `min(${Math.min(Math.ceil(d.height), 4000)}px, calc(100vh - 24px))`;
    }
  }

  function onKey(event) {
    if (event.key === "Escape" && session) close();
  }

  function open(options) {
    const paymentId = options?.paymentId;
    if (!PAYMENT_ID.test(String(paymentId))) {
      throw new Error("Stablegate.open: paymentId must be a payment id (0x followed by 64 hex digits)");
    }
    if (session) close();
    const root = document.documentElement;
    const overlay = style(document.createElement("div"), {
      position: "fixed",
      inset: "0",
      zIndex: "2147483647",
      background: "rgba(13, 16, 21, 0.62)",
      display: "flex",
      alignItems: "center",
      justifyContent: "center",
      padding: "12px",
    });
    const dialog = style(document.createElement("div"), {
      position: "relative",
      width: "100%",
      maxWidth: "460px",
      height: "min(640px, calc(100vh - 24px))",
      background: "#fff",
      borderRadius: "14px",
      overflow: "hidden",
      boxShadow: "0 20px 60px rgba(0, 0, 0, 0.35)",
    });
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-label", "Checkout");
    const frame = style(document.createElement("iframe"), {
      border: "0",
      width: "100%",
      height: "100%",
      display: "block",
    });
    frame.title = "Stablegate checkout";
    frame.allow = "clipboard-write";
    frame.src = `${ORIGIN}/pay/${paymentId}?embed=1&origin=${encodeURIComponent(location.origin)}`;
    const button = style(document.createElement("button"), {
      position: "absolute",
      top: "10px",
      right: "10px",
      width: "36px",
      height: "36px",
      borderRadius: "50%",
      border: "1px solid #d8dce3",
      background: "#fff",
      color: "#111827",
      font: "20px/1 system-ui, sans-serif",
      cursor: "pointer",
    });
    button.type = "button";
    button.textContent = "×";
    button.setAttribute("aria-label", "Close checkout");
    button.addEventListener("click", () => close());
    overlay.addEventListener("click", (event) => event.target === overlay && close());
    dialog.append(frame, button);
    overlay.append(dialog);
    document.body.append(overlay);

    session = {
      paymentId: paymentId,
      options: options,
      overlay: overlay,
      dialog: dialog,
      frame: frame,
      done: false,
      closed: false,
      opener: document.activeElement,
      overflow: root.style.overflow,
    };
    const s = session;
    // Messages make the callback prompt; polling covers a page that cannot message us.
    s.interval = setInterval(() => check(s), CHECK_MS);
    root.style.overflow = "hidden";
    window.addEventListener("message", onMessage);
    document.addEventListener("keydown", onKey);
    frame.addEventListener("load", () => frame.focus());
    return { close: close };
  }

  function close() {
    const s = session;
    if (!s) return;
    session = null;
    s.closed = true;
    clearInterval(s.interval);
    window.removeEventListener("message", onMessage);
    document.removeEventListener("keydown", onKey);
    s.overlay.remove();
    document.documentElement.style.overflow = s.overflow;
    if (s.opener && typeof s.opener.focus === "function") s.opener.focus();
    if (typeof s.options.onClose === "function") s.options.onClose({ paymentId: s.paymentId, confirmed: s.done });
  }

  document.addEventListener("click", (event) => {
    const el = event.target instanceof Element ? event.target.closest("[data-stablegate-payment]") : null;
    if (!el) return;
    event.preventDefault();
    open({ paymentId: el.getAttribute("data-stablegate-payment") });
  });

  window.Stablegate = { open: open, close: close };
})();
