import { formatExact } from "../lib/money.ts";

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** "28 November 2026": a date in UTC spelled out, the same on every machine (no locale, no zone). */
export function documentDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** "12.50 USDC", exact to the micro-USDC where it has to be. */
export const usdc = (micro: bigint): string => `${formatExact(micro)} USDC`;

/** Which page size a PDF is printed on (docs/documents.md): A4 unless the request asks for Letter. */
export type Paper = "a4" | "letter";

export function paperFrom(text: string | null): Paper | null {
  if (text === null || text === "" || text === "a4") return "a4";
  return text === "letter" ? "letter" : null;
}
