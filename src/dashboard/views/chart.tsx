// A line chart drawn on the server: one SVG, no script; each point's <title> is its tooltip, and the numbers are
// in a table next to it for anyone who cannot see the lines.

export type Series = { key: string; label: string; values: number[] };

const WIDTH = 720;
const HEIGHT = 240;
const PAD = { left: 44, right: 12, top: 12, bottom: 28 };

/** A round top for the y axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= max)!;
}

export function LineChart(props: { id: string; title: string; labels: string[]; series: Series[] }) {
  const { labels, series } = props;
  const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (labels.length === 1 ? plotWidth / 2 : (i * plotWidth) / (labels.length - 1));
  const y = (value: number) => PAD.top + plotHeight - (value / top) * plotHeight;
  const every = Math.max(1, Math.ceil(labels.length / 8));
  return (
    <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${props.id}-title`}>
      <title id={`${props.id}-title`}>{props.title}</title>
      {[0, 0.25, 0.5, 0.75, 1].map((share) => (
        <g>
          <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(top * share)} y2={y(top * share)} />
          <text class="axis" x={PAD.left - 6} y={y(top * share) + 4} text-anchor="end">
            {String(Math.round(top * share))}
          </text>
        </g>
      ))}
      {labels.map((label, i) =>
        i % every === 0 || i === labels.length - 1 ? (
          <text class="axis" x={x(i)} y={HEIGHT - 8} text-anchor={i === labels.length - 1 ? 'end' : 'middle'}>
            {label}
          </text>
        ) : null,
      )}
      {series.map((s) => (
        <g class={`series series-${s.key}`}>
          <polyline points={s.values.map((value, i) => `${x(i)},${y(value)}`).join(' ')} />
          {s.values.map((value, i) => (
            <circle cx={x(i)} cy={y(value)} r="3.5">
              <title>{`${labels[i]}: ${value} ${s.label.toLowerCase()}`}</title>
            </circle>
          ))}
        </g>
      ))}
    </svg>
  );
}

/** The chart's legend: a swatch per series in its colour. */
export const Legend = (props: { series: Series[] }) => (
  <ul class="legend">
    {props.series.map((s) => (
      <li>
        <span class={`swatch series-${s.key}`} aria-hidden="true" />
        {s.label}
      </li>
    ))}
  </ul>
);
