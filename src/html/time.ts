import { html, type Raw } from "./template.ts";

/** "21 Jan 2026, 14:05 UTC": unambiguous everywhere; the page script localises it. */
export function humanTime(iso: string): string {
  const d = new Date(iso);
  const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][d.getUTCMonth()];
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${iso.slice(11, 16)} UTC`;
}

export const timeTag = (iso: string, id?: string): Raw =>
  html`<time ${id ? html`id="${id}" ` : ""}datetime="${iso}" data-local>${humanTime(iso)}</time>`;
