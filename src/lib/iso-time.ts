/**
 * Strict ISO 8601 dates and date-times with a time zone. Date.parse rolls impossible dates over
 * ("2027-02-30" becomes 2 March) and accepts hours like 24; these parsers refuse them instead.
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Milliseconds since the epoch, or NaN when `text` is not a real calendar date or date-time. A
 * bare date means the start of that day, UTC, or its last millisecond with `endOfDay`.
 */
export function parseIsoInstant(text: string, opts: { endOfDay?: boolean } = {}): number {
  const date = DATE.exec(text);
  if (date) {
    const [, y, m, d] = date.map(Number) as [number, number, number, number];
    if (!validDate(y, m, d)) return Number.NaN;
    return Date.UTC(y, m - 1, d) + (opts.endOfDay ? 86_400_000 - 1 : 0);
  }
  const match = DATE_TIME.exec(text);
  if (!match) return Number.NaN;
  const [y, mo, d, h, mi, s] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [fraction, zone, sign, zh, zm] = match.slice(7);
  if (!validDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return Number.NaN;
  let offsetMinutes = 0;
  if (zone !== "Z") {
    if (Number(zh) > 23 || Number(zm) > 59) return Number.NaN;
    offsetMinutes = (sign === "-" ? -1 : 1) * (Number(zh) * 60 + Number(zm));
  }
  const ms = Math.floor(Number(fraction ?? 0) * 1000);
  return Date.UTC(y, mo - 1, d, h, mi, s, ms) - offsetMinutes * 60_000;
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}
