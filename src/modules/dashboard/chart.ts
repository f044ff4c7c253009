import { INTL_LOCALES, type Lang } from '../../lib/i18n.js';

/** A bar chart drawn on the server as SVG: plain numbers here, the template writes the elements. */
export interface ChartBar {
  x: number;
  y: number;
  width: number;
  height: number;
  day: string;
  total: number;
}

/** A value on the vertical axis, with the height its grid line is drawn at. */
export interface ChartTick {
  y: number;
  value: number;
}

export interface BarChart {
  width: number;
  height: number;
  /** Where the plot starts on the left, after the axis's labels. */
  left: number;
  baseline: number;
  bars: ChartBar[];
  ticks: ChartTick[];
  /** The top of the axis: the largest day rounded up to a round value. */
  max: number;
  total: number;
  /** The day with the largest total (the first such), or undefined when nothing was paid. */
  best: { day: string; total: number } | undefined;
}

const WIDTH = 600;
const HEIGHT = 180;
const LEFT = 56;
const TOP = 10;
const BOTTOM = 20;
const TICKS = 4;

/** The smallest 1, 2, 2.5 or 5 × 10^k (in centimes, at least 1 MRU per step) that `max / TICKS` fits under. */
export function niceStep(max: number, ticks = TICKS): number {
  const raw = Math.max(100, max / ticks);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw)!;
  return Math.round(step);
}

/** One bar per day of `days` (oldest first) over an axis of round values; a day without payments has none. */
export function barChart(days: { day: string; total: number }[]): BarChart {
  const largest = Math.max(0, ...days.map((d) => d.total));
  const step = niceStep(largest);
  const max = step * TICKS;
  const plotWidth = WIDTH - LEFT;
  const slot = plotWidth / Math.max(1, days.length);
  const baseline = HEIGHT - BOTTOM;
  const plotHeight = baseline - TOP;
  const scale = (value: number) => Math.round((value / max) * plotHeight);
  const bars = days.map((d, i) => {
    const height = Math.max(d.total > 0 ? 2 : 0, scale(d.total));
    return {
      x: Math.round(LEFT + i * slot + slot * 0.15),
      y: baseline - height,
      width: Math.max(1, Math.round(slot * 0.7)),
      height,
      day: d.day,
      total: d.total,
    };
  });
  const ticks = Array.from({ length: TICKS + 1 }, (_, i) => ({ value: i * step, y: baseline - scale(i * step) }));
  const best = days.reduce<{ day: string; total: number } | undefined>(
    (top, d) => (d.total > 0 && (!top || d.total > top.total) ? d : top),
    undefined,
  );
  const total = days.reduce((sum, d) => sum + d.total, 0);
  return { width: WIDTH, height: HEIGHT, left: LEFT, baseline, bars, ticks, max, total, best };
}

/** The last `count` UTC days ending today, as YYYY-MM-DD, oldest first. */
export function lastDays(count: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: count }, (_, i) =>
    new Date(today - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

/** A chart's day (YYYY-MM-DD, a UTC day) as the language writes it. */
export interface ChartDates {
  /** Under a bar: "Nov 8", "8 nov.", "8 نوفمبر". */
  short: (day: string) => string;
  /** In the values' table, a bar's tooltip and the summary: "November 8, 2026", "8 novembre 2026". */
  long: (day: string) => string;
}

/** The chart's days in `lang` (Intl, in UTC like the days themselves), not the "11-08" of the ISO text. */
export function chartDates(lang: Lang): ChartDates {
  const locale = INTL_LOCALES[lang];
  const short = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const long = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  const dateOf = (day: string) => new Date(`${day}T00:00:00Z`);
  return { short: (day) => short.format(dateOf(day)), long: (day) => long.format(dateOf(day)) };
}
