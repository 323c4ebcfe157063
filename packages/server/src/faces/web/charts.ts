import { html, type Html } from './html.js';

export interface Bar {
  label: string;
  value: number;
}

export interface BarChartOptions {
  /** Accessible name of the chart, e.g. "Rating distribution". */
  title: string;
  bars: Bar[];
  /** Show every nth label under the bars (1 = all). */
  labelEvery?: number;
  /** Unit for the accessible description, e.g. "reviews". */
  unit: string;
}

const WIDTH = 600;
const HEIGHT = 180;
const AXIS = 22;
const TOP = 18;
/** Room left and right so the first and last labels are not cut off. */
const SIDE = 24;

/**
 * A bar chart as inline SVG: no script, no chart library, styled by the site's CSS (so both colour
 * schemes apply). Sizes are SVG attributes, not inline styles, so the CSP can forbid inline style.
 */
export function barChart({ title, bars, labelEvery = 1, unit }: BarChartOptions): Html {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const slot = (WIDTH - 2 * SIDE) / Math.max(1, bars.length);
  const barWidth = Math.max(2, slot * 0.7);
  const plot = HEIGHT - AXIS - TOP;
  const description = bars.map((bar) => `${bar.label}: ${bar.value}`).join(', ');
  return html`<svg
    class="chart"
    viewBox="0 0 ${WIDTH} ${HEIGHT}"
    role="img"
    aria-label="${title} (${unit}): ${description}"
    preserveAspectRatio="xMidYMid meet"
  >
    <line class="chart-axis" x1="0" y1="${HEIGHT - AXIS}" x2="${WIDTH}" y2="${HEIGHT - AXIS}"></line>
    ${bars.map((bar, index) => {
      const height = bar.value === 0 ? 0 : Math.max(2, (bar.value / max) * plot);
      const x = SIDE + index * slot + (slot - barWidth) / 2;
      const y = HEIGHT - AXIS - height;
      const center = SIDE + index * slot + slot / 2;
      return html`<g
        ><rect
          class="chart-bar"
          x="${x.toFixed(1)}"
          y="${y.toFixed(1)}"
          width="${barWidth.toFixed(1)}"
          height="${height.toFixed(1)}"
          ><title>${bar.label}: ${bar.value} ${unit}</title></rect
        >${
          bar.value > 0 && bars.length <= 12
            ? html`<text
                class="chart-value"
                x="${center.toFixed(1)}"
                y="${(y - 4).toFixed(1)}"
                text-anchor="middle"
                >${bar.value}</text
              >`
            : ''
        }${
          index % labelEvery === 0
            ? html`<text class="chart-label" x="${center.toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle"
                >${bar.label}</text
              >`
            : ''
        }</g
      >`;
    })}
  </svg>`;
}
