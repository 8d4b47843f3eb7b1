import { html, type Raw } from "../checkout/html.ts";

/** A one-line message at the top of a page: what just happened, or why a form was refused. */
export interface Notice {
  tone: "ok" | "bad" | "info";
  text: string;
}

export function noticeBox(notice: Notice): Raw {
  const tone = notice.tone === "info" ? "" : ` ${notice.tone}`;
  const role = notice.tone === "bad" ? "alert" : "status";
  return html`<p class="notice${tone}" role="${role}">${notice.text}</p>`;
}

/** The body of the dashboard's 404, for a missing id and another account's alike. */
export const notFoundBody = (back: { href: string; label: string }): Raw =>
  html`<section class="card">
  <h1>Not found</h1>
  <p class="muted">There is nothing with this id in your account.</p>
  <p><a href="${back.href}">${back.label}</a></p>
</section>`;
