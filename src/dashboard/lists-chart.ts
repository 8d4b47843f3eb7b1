import { html, type Raw } from "../html/template.ts";
import { formatExact } from "../lib/money.ts";

const WIDTH = 600;
const HEIGHT = 160;
const GAP = 4;

/**
 * Daily settled volume as bars, drawn here as SVG (nothing loaded from anywhere). The SVG is one
 * labelled image for screen readers; the same figures follow as a table, which is also what
 * `title` and `caption` describe. Styled by class from the dashboard's stylesheet (no inline style).
 */
export function dailyChart(title: string, days: Array<{ day: string; gross: bigint }>): Raw {
  // biome-ignore lint/complexity/useMathMinMax: the values are bigint, which Math.max does not take
  const max = days.reduce((m, d) => (d.gross > m ? d.gross : m), 0n);
  const slot = WIDTH / days.length;
  const bars = days.map((d, i) => {
    // Whole thousandths of the tallest bar: bigint all the way, a float only for the pixel height.
    const height = max === 0n ? 0 : (Number((d.gross * 1000n) / max) / 1000) * HEIGHT;
    const shown = d.gross > 0n && height < 1 ? 1 : height;
    const x = (i * slot + GAP / 2).toFixed(1);
    const y = (HEIGHT - shown).toFixed(1);
    return html`<rect class="bar-day" x="${x}" y="${y}" width="${(slot - GAP).toFixed(1)}" height="${shown.toFixed(1)}">
      <title>${d.day}: ${formatExact(d.gross)} USDC</title></rect>`;
  });
  const total = days.reduce((sum, d) => sum + d.gross, 0n);
  const summary = `${formatExact(total)} USDC settled over ${days.length} days; the best day ${formatExact(max)} USDC.`;
  return html`<figure class="chart">
  <svg viewBox="0 0 ${WIDTH} ${HEIGHT + 1}" preserveAspectRatio="none"
    role="img" aria-labelledby="chart-title chart-summary">
    <title id="chart-title">${title}</title>
    <line class="chart-base" x1="0" y1="${HEIGHT + 0.5}" x2="${WIDTH}" y2="${HEIGHT + 0.5}"></line>
    ${bars}
  </svg>
  <div class="chart-axis muted"><span>${days[0]?.day ?? ""}</span><span>${days.at(-1)?.day ?? ""}</span></div>
  <figcaption id="chart-summary" class="muted">${summary}</figcaption>
  <details class="chart-table">
    <summary>Show as a table</summary>
    <div class="table-wrap"><table>
      <caption>${title}</caption>
      <thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Settled</th></tr></thead>
      <tbody>${days.map(
        (d) => html`<tr><td>${d.day}</td><td class="num">${formatExact(d.gross)} USDC</td></tr>`,
      )}</tbody>
    </table></div>
  </details>
</figure>`;
}
