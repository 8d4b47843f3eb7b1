import { assetUrl } from "../html/assets.ts";
import { html } from "../html/template.ts";
import { DOCS_ASSETS } from "./assets.ts";

/** Where the page reads the API's description from. */
export const OPENAPI_PATH = "/openapi.json";

/**
 * The API reference page: Swagger UI renders /openapi.json into `#docs`. The page itself holds
 * no script (the CSP allows only files from this server); without JavaScript it says where the
 * document is.
 */
export function docsPage(): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Stablegate API reference</title>
<link rel="stylesheet" href="${assetUrl(DOCS_ASSETS.swaggerCss)}">
<link rel="stylesheet" href="${assetUrl(DOCS_ASSETS.css)}">
<script src="${assetUrl(DOCS_ASSETS.swaggerJs)}" defer></script>
<script src="${assetUrl(DOCS_ASSETS.init)}" defer></script>
</head>
<body>
<div id="docs" data-openapi="${OPENAPI_PATH}">
<noscript><p class="docs-noscript">This reference needs JavaScript. The API's OpenAPI 3.1 document is at
<a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>; docs/api.md in the repository describes every route
as well.</p></noscript>
</div>
</body>
</html>`.toString();
}
