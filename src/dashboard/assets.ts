import { type Asset, asset, JS, themed } from "../html/assets.ts";
import js from "./assets/dashboard.client.js" with { type: "text" };
import css from "./assets/dashboard.css" with { type: "text" };

/** The dashboard's stylesheet and its one small script (copy buttons, live status), in the binary. */
export const DASHBOARD_ASSETS = {
  css: asset("/dashboard/assets/dashboard.css", themed(css), "text/css; charset=utf-8"),
  js: asset("/dashboard/assets/dashboard.js", js, JS),
} as const;

export const dashboardAssetUrl = (a: Asset): string => `${a.path}?v=${a.version}`;
