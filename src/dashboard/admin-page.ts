import { html, type Raw } from "../html/template.ts";

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
