import { asset, themed } from "../html/assets.ts";
import css from "./assets/documents.css" with { type: "text" };

/** The invoice and receipt pages' one stylesheet, in the binary. */
export const DOCUMENT_ASSETS = {
  css: asset("/documents.css", themed(css), "text/css; charset=utf-8"),
} as const;
