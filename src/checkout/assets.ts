import { asset, JS, themed } from "../html/assets.ts";
import css from "./assets/checkout.css" with { type: "text" };
import crossChainJs from "./assets/pay-crosschain.client.js" with { type: "text" };
import gaslessJs from "./assets/pay-gasless.client.js" with { type: "text" };
import pageJs from "./assets/pay-page.client.js" with { type: "text" };
import walletJs from "./assets/pay-wallet.client.js" with { type: "text" };
import widgetJs from "./assets/widget.client.js" with { type: "text" };

export const ASSETS = {
  css: asset("/checkout.css", themed(css), "text/css; charset=utf-8"),
  page: asset("/checkout-page.js", pageJs, JS),
  wallet: asset("/checkout-wallet.js", walletJs, JS),
  gasless: asset("/checkout-gasless.js", gaslessJs, JS),
  crossChain: asset("/checkout-crosschain.js", crossChainJs, JS),
  /** The merchant-side widget; its URL is part of the public contract, so it is not versioned. */
  widget: asset("/checkout.js", widgetJs, JS),
} as const;

/** The scripts the checkout page loads, in order (each is `defer`). */
export const PAGE_SCRIPTS = [ASSETS.page, ASSETS.wallet, ASSETS.gasless, ASSETS.crossChain];
