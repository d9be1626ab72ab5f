import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { useEffect, useId, useRef } from 'react';

// Only what these charts draw is registered: the rest of Chart.js is left out of the bundle.
Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Legend,
  Tooltip,
);

/** Distinct in light and dark schemes alike; a series keeps its colour across charts by its place. */
const PALETTE = ['#2f81f7', '#1a7f37', '#bf8700', '#8250df', '#cf222e', '#e16f24', '#57606a'];

export interface Series {
  label: string;
  data: number[];
}

export interface ChartProps {
  kind: 'line' | 'bar';
  /** Said before the chart and used as the table's caption. */
  title: string;
  /** One per point (the x axis, or the bars' names). */
  labels: string[];
  series: Series[];
  /** Bars lie sideways (for long names: campaigns, events). */
  horizontal?: boolean;
  /** Fixed colour per series (an index into the palette), when the series are a subset of a known set. */
  colors?: number[];
  /** One series whose bars are the metrics in their usual order: each bar in its metric's colour. */
  colorBars?: boolean;
}

const cssVar = (name: string, fallback: string) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

function configOf({ kind, labels, series, horizontal, colors, colorBars }: ChartProps): ChartConfiguration {
  const text = cssVar('--muted', '#57606a');
  const grid = cssVar('--border', '#d0d7de');
  const scale = { ticks: { color: text }, grid: { color: grid }, beginAtZero: true };
  return {
    type: kind,
    data: {
      labels,
      datasets: series.map((s, i) => {
        const color = PALETTE[(colors?.[i] ?? i) % PALETTE.length] as string;
        const fill = colorBars ? s.data.map((_, j) => PALETTE[j % PALETTE.length] as string) : color;
        return { label: s.label, data: s.data, borderColor: fill, backgroundColor: fill, pointRadius: 2 };
      }),
    },
    options: {
      // Redrawn on every poll while a campaign sends: no animation to replay, nothing moves on its own.
      animation: false,
      maintainAspectRatio: false,
      indexAxis: horizontal ? 'y' : 'x',
      plugins: { legend: { display: series.length > 1, labels: { color: text } } },
      scales: { x: scale, y: { ...scale, ticks: { color: text, precision: 0 } } },
    },
  };
}

/**
 * A chart drawn by Chart.js on a canvas, with its numbers as text: the canvas is an image whose
 * label says what it shows, and the same numbers are in a table a person can open (and a screen
 * reader reads).
 */
export function ChartView(props: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  const id = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: created once; the effect below updates its data
  useEffect(() => {
    if (!canvas.current) return;
    chart.current = new Chart(canvas.current, configOf(props));
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);
  useEffect(() => {
    const current = chart.current;
    if (!current) return;
    const next = configOf(props);
    current.data = next.data;
    current.options = next.options ?? {};
    current.update();
  }, [props]);
  // Said in words: one series by its points (bars' names and values), several by their totals.
  const [only] = props.series;
  const words =
    props.series.length === 1 && only
      ? props.labels.map((label, i) => `${label} ${(only.data[i] ?? 0).toLocaleString()}`)
      : props.series.map((s) => `${s.label} ${s.data.reduce((a, b) => a + b, 0).toLocaleString()} in all`);
  return (
    <figure className="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>{props.title}</figcaption>
      <div
        className="chart-canvas"
        // Sideways bars: the chart grows with their number rather than stretching a few.
        style={props.horizontal ? { height: `${4 + 2.25 * props.labels.length}rem` } : undefined}
      >
        <canvas
          ref={canvas}
          role="img"
          aria-label={`${props.title}: ${words.join(', ')}. The numbers are in the table below the chart.`}
        />
      </div>
      <details>
        <summary>Numbers of this chart</summary>
        <ChartTable {...props} />
      </details>
    </figure>
  );
}

function ChartTable({ title, labels, series }: ChartProps) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{title}</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="sr-only">Point</span>
            </th>
            {series.map((s) => (
              <th scope="col" key={s.label}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((label, row) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat (same day in two months is not, but hours may)
            <tr key={row}>
              <th scope="row">{label}</th>
              {series.map((s) => (
                <td key={s.label}>{(s.data[row] ?? 0).toLocaleString()}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
