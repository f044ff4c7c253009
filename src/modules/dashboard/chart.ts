/** A bar chart drawn on the server as SVG: plain numbers here, the template writes the elements. */
export interface ChartBar {
  x: number;
  y: number;
  width: number;
  height: number;
  day: string;
  total: number;
}

export interface BarChart {
  width: number;
  height: number;
  baseline: number;
  bars: ChartBar[];
  max: number;
}

const WIDTH = 600;
const HEIGHT = 160;
const AXIS = 18;

/** One bar per day of `days` (oldest first), scaled to the largest; a day without payments has none. */
export function barChart(days: { day: string; total: number }[]): BarChart {
  const max = Math.max(0, ...days.map((d) => d.total));
  const slot = WIDTH / Math.max(1, days.length);
  const plot = HEIGHT - AXIS;
  const bars = days.map((d, i) => {
    const height = max === 0 ? 0 : Math.max(d.total > 0 ? 2 : 0, Math.round((d.total / max) * (plot - 4)));
    return {
      x: Math.round(i * slot + slot * 0.15),
      y: plot - height,
      width: Math.max(1, Math.round(slot * 0.7)),
      height,
      day: d.day,
      total: d.total,
    };
  });
  return { width: WIDTH, height: HEIGHT, baseline: plot, bars, max };
}

/** The last `count` UTC days ending today, as YYYY-MM-DD, oldest first. */
export function lastDays(count: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: count }, (_, i) =>
    new Date(today - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}
