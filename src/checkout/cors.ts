import { Elysia } from "elysia";

const PUBLIC_PREFIX = "/api/public/";
const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  // x402 (src/x402/routes.ts): a browser client sends PAYMENT-SIGNATURE and reads the answer's headers.
  "access-control-allow-headers": "content-type, payment-signature",
  "access-control-expose-headers": "payment-required, payment-response",
  "access-control-max-age": "600",
};

/**
 * Open CORS for the public API only, so the widget can call it from a merchant's domain. No
 * credentials: the payment id in the path is the whole capability. (@elysiajs/cors hooks every
 * route of the app, which would put CORS headers on the merchant API too.)
 */
export const publicCors = new Elysia({ name: "stablegate-public-cors" }).onRequest(({ request, set }) => {
  if (!new URL(request.url).pathname.startsWith(PUBLIC_PREFIX)) return;
  Object.assign(set.headers, CORS_HEADERS);
  if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS_HEADERS });
});
