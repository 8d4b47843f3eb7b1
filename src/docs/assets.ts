import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "text" };
import bundleJs from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import { asset, JS } from "../checkout/assets.ts";
import initJs from "./assets/docs.client.js" with { type: "text" };
import css from "./assets/docs.css" with { type: "text" };

const CSS = "text/css; charset=utf-8";

/**
 * The reference page's files, all in the binary: Swagger UI's prebuilt bundle and stylesheet
 * (swagger-ui-dist, pinned in package.json), the few lines that start it, and our adjustments.
 */
export const DOCS_ASSETS = {
  swaggerCss: asset("/docs/swagger-ui.css", swaggerCss, CSS),
  css: asset("/docs/docs.css", css, CSS),
  swaggerJs: asset("/docs/swagger-ui-bundle.js", bundleJs, JS),
  init: asset("/docs/docs.js", initJs, JS),
} as const;
