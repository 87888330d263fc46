import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { DaySeries } from './series.js';

// A chunk of its own, asked for when the console starts: the sign-in path parses half the script,
// and the library is there long before a chart has data to draw.
const library = import('uplot').then((module) => module.default);

/** Colours that read on light and dark backgrounds alike. */
const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];

export type { DaySeries } from './series.js';

const daySeconds = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 1000;

/** Stacking: each series is drawn as the sum of itself and those below it, the top one first so the lower ones paint over it. */
function stackedData(series: readonly DaySeries[]): number[][] {
  const sums: number[][] = [];
  let running: number[] = series[0]?.values.map(() => 0) ?? [];
  for (const one of series) {
    running = running.map((sum, i) => sum + (one.values[i] ?? 0));
    sums.push(running);
  }
  return sums;
}

function themeColour(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** Bars per series (top of the stack first: uPlot paints series in order, so the lower ones paint over it). */
function chartOptions(UPlot: typeof uPlot, element: HTMLElement, series: readonly DaySeries[], stacked: boolean, format: (n: number) => string): uPlot.Options {
  const ink = themeColour('--muted', '#666');
  const grid = themeColour('--line', '#ddd');
  const bars = UPlot.paths.bars!({ size: [0.7, 40], align: 0 });
  const axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const drawn = series.map((one, i) => ({ label: one.label, stroke: PALETTE[i % PALETTE.length]!, fill: PALETTE[i % PALETTE.length]!, paths: bars, width: 0, points: { show: false } }));
  return {
    width: Math.max(200, element.clientWidth),
    height: 240,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [axis, { ...axis, size: 64, values: (_u, ticks) => ticks.map(format) }],
    legend: { show: true, live: false },
    cursor: { show: false },
    series: [{}, ...(stacked ? drawn.reverse() : drawn)],
  };
}

function chartData(days: readonly string[], series: readonly DaySeries[], stacked: boolean): uPlot.AlignedData {
  const values = stacked ? stackedData(series) : series.map((one) => [...one.values]);
  return [days.map(daySeconds), ...(stacked ? [...values].reverse() : values)] as uPlot.AlignedData;
}

/**
 * Cost per day as bars (stacked when there are several series), with uPlot. The chart is a
 * picture: `label` names it for screen readers, and every page shows the same numbers in a table.
 */
export function DayChart({ label, days, series, stacked = true, format }: { readonly label: string; readonly days: readonly string[]; readonly series: readonly DaySeries[]; readonly stacked?: boolean; readonly format: (n: number) => string }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (element === null || days.length === 0) return;
    let plot: uPlot | null = null;
    let resize: ResizeObserver | null = null;
    let cleared = false;
    void library.then((UPlot) => {
      // The data changed (or the page left) before the library came: that effect's successor draws.
      if (cleared) return;
      plot = new UPlot(chartOptions(UPlot, element, series, stacked, format), chartData(days, series, stacked), element);
      const drawn = plot;
      resize = new ResizeObserver(() => drawn.setSize({ width: Math.max(200, element.clientWidth), height: 240 }));
      resize.observe(element);
    });
    return () => {
      cleared = true;
      resize?.disconnect();
      plot?.destroy();
    };
  }, [days, series, stacked]);
  if (days.length === 0) return <p class="empty">No traffic in this period.</p>;
  return <div class="chart" ref={holder} role="img" aria-label={label} />;
}
