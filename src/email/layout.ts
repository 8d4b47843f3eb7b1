import { html, type Raw } from "../html/template.ts";

/** An email's words: its subject, and its body as plain text and as HTML (escaped by `html`). */
export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** A line of a body: a paragraph, a label and its value, or a button-like link. */
export type Block =
  | { p: string }
  | { rows: Array<[string, string]> }
  | { link: string; label: string }
  | { note: string };

/** Inline styles: mail programs drop <style> blocks and never load a stylesheet. */
const STYLE = {
  body:
    "margin:0;padding:24px 12px;background:#f4f5f7;color:#111;line-height:1.5;" +
    "font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif",
  card: "max-width:560px;margin:0 auto;background:#fff;border-radius:8px;padding:24px",
  h1: "font-size:20px;margin:0 0 16px",
  p: "margin:0 0 16px",
  note: "margin:0 0 16px;color:#555;font-size:14px",
  buttonRow: "margin:0 0 20px",
  button:
    "display:inline-block;background:#1a56db;color:#fff;text-decoration:none;padding:10px 18px;" +
    "border-radius:6px;font-weight:600",
  url: "margin:0 0 16px;font-size:13px;color:#555;word-break:break-all",
  table: "border-collapse:collapse;margin:0 0 16px;width:100%",
  label: "padding:4px 12px 4px 0;color:#555;vertical-align:top;white-space:nowrap",
  value: "padding:4px 0;word-break:break-all",
  footer: "margin:24px 0 0;padding-top:12px;border-top:1px solid #e5e7eb;color:#666;font-size:12px",
};

/**
 * Renders one email from its blocks, the same words in both bodies. The HTML is self-contained:
 * inline styles, no images, nothing fetched when it is opened (no tracking pixels by construction).
 */
export function renderEmail(subject: string, heading: string, blocks: Block[], footer: string): RenderedEmail {
  const text = [
    heading,
    "",
    ...blocks.flatMap((b) => {
      if ("p" in b) return [wrap(b.p), ""];
      if ("note" in b) return [wrap(b.note), ""];
      if ("link" in b) return [`${b.label}:`, b.link, ""];
      const width = Math.max(...b.rows.map(([label]) => label.length)) + 2;
      return [...b.rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`), ""];
    }),
    "--",
    wrap(footer),
    "",
  ].join("\n");
  const body: Raw[] = blocks.map((b) => {
    if ("p" in b) return html`<p style="${STYLE.p}">${b.p}</p>`;
    if ("note" in b) return html`<p style="${STYLE.note}">${b.note}</p>`;
    if ("link" in b)
      return html`<p style="${STYLE.buttonRow}"><a href="${b.link}" style="${STYLE.button}">${b.label}</a></p>
<p style="${STYLE.url}">${b.link}</p>`;
    return html`<table role="presentation" style="${STYLE.table}">${b.rows.map(
      ([label, value]) =>
        html`<tr><td style="${STYLE.label}">${label}</td><td style="${STYLE.value}">${value}</td></tr>`,
    )}</table>`;
  });
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${subject}</title></head>
<body style="${STYLE.body}">
<div style="${STYLE.card}">
<h1 style="${STYLE.h1}">${heading}</h1>
${body}
<p style="${STYLE.footer}">${footer}</p>
</div></body></html>`;
  return { subject, text, html: page.value };
}

/** Wraps a paragraph at 76 columns, as plain-text mail reads best. */
function wrap(paragraph: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of paragraph.split(/\s+/)) {
    if (line && line.length + word.length + 1 > 76) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join("\n");
}
