import theme from "./theme.css" with { type: "text" };

/** A browser file embedded in the binary, served at `path`. */
export interface Asset {
  path: string;
  body: string;
  contentType: string;
  /** Content hash: pages link `path?v=version`, which can then be cached for good. */
  version: string;
}

export const JS = "text/javascript; charset=utf-8";

/** A stylesheet with the shared colours and type in front of it: one file per page, one source for both. */
export const themed = (css: string): string => `${theme}\n${css}`;
/** An embedded file with its content hash; the checkout, the dashboard and docs build their assets with it. */
export const asset = (path: string, body: string, contentType: string): Asset => ({
  path,
  body,
  contentType,
  version: Bun.hash(body).toString(36),
});

export const assetUrl = (a: Asset): string => `${a.path}?v=${a.version}`;

/**
 * Serves an asset: a matching `?v=` is immutable, anything else revalidates after 5 minutes
 * (the widget's fixed URL, old links). Open to any origin: a merchant page loads the widget.
 */
export function assetResponse(a: Asset, request: Request): Response {
  const versioned = new URL(request.url).searchParams.get("v") === a.version;
  return new Response(a.body, {
    headers: {
      "content-type": a.contentType,
      "cache-control": versioned ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "x-content-type-options": "nosniff",
      "access-control-allow-origin": "*",
      "cross-origin-resource-policy": "cross-origin",
    },
  });
}
