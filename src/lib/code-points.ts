/**
 * A pattern admitting `min` to `max` characters counted as code points, as docs/api.md counts
 * them: TypeBox's minLength/maxLength count UTF-16 units, so an emoji would count twice. The
 * three alternatives never overlap (a pair, a lone high surrogate, anything else), so a failing
 * match backtracks linearly.
 */
export function codePoints(min: number, max: number): string {
  const pair = "[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]";
  const loneHigh = "[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])";
  const other = "[^\\uD800-\\uDBFF]";
  return `^(?:${pair}|${loneHigh}|${other}){${min},${max}}$`;
}
