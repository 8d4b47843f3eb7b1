/**
 * Security headers for server-rendered pages: nothing loads from anywhere but here, no inline
 * script or style, and no referrer to the explorers and sites they link to. Forms may post only
 * where `formAction` says: nowhere on the checkout, back to this origin on a payment link's page
 * and in the dashboard. Any site may frame a payer's page (the widget shows it in an iframe; the
 * only actions in it are copying text and requests the payer approves in their own wallet); the
 * dashboard is never framed, which would invite clickjacking of its buttons.
 */
export function pageHeaders(formAction: "'none'" | "'self'", framing: "any site" | "never" = "any site") {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": [
      "default-src 'none'",
      "style-src 'self'",
      "img-src 'self' data:",
      "script-src 'self'",
      "connect-src 'self'",
      "base-uri 'none'",
      `form-action ${formAction}`,
      `frame-ancestors ${framing === "never" ? "'none'" : "*"}`,
    ].join("; "),
    ...(framing === "never" ? { "x-frame-options": "DENY" } : {}),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}
