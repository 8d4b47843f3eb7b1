import { readFileSync } from "node:fs";
import swaggerCssFile from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import swaggerJsFile from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import { asset, JS } from "../html/assets.ts";
import initJs from "./assets/docs.client.js" with { type: "text" };
import css from "./assets/docs.css" with { type: "text" };

const CSS = "text/css; charset=utf-8";

// Swagger UI's files are embedded as files, not as text: their text has characters beyond
// Latin-1, which the compiled binary would hold as UTF-16, twice the size.
const vendor = (path: string): string => readFileSync(path, "utf8");

/**
 * The reference page's files, all in the binary: Swagger UI's prebuilt bundle and stylesheet
 * (swagger-ui-dist, pinned in package.json), the few lines that start it, and our adjustments.
 */
export const DOCS_ASSETS = {
  swaggerCss: asset("/docs/swagger-ui.css", vendor(swaggerCssFile), CSS),
  css: asset("/docs/docs.css", css, CSS),
  swaggerJs: asset("/docs/swagger-ui-bundle.js", vendor(swaggerJsFile), JS),
  init: asset("/docs/docs.js", initJs, JS),
} as const;
