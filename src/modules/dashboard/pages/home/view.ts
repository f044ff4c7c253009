import type { BarChart, ChartDates } from '../../chart.js';
import type { RefundNote } from '../../view-types.js';
import type { intentCountsByStatus, latestIntents, orderCountsByStatus, paidVolumeByDay } from '../../queries.js';

type Day = Awaited<ReturnType<typeof paidVolumeByDay>>[number];

/** What the home page draws: the balance, today's and the month's volume, the chart, counts and the latest payments. */
export interface HomeViews {
  home: {
    available: number | null;
    today: Day;
    month: { total: number; count: number };
    chart: BarChart;
    /** The chart's days in the page's language. */
    chartDate: ChartDates;
    days: Day[];
    axisLabel: (centimes: number) => string;
    counts: Awaited<ReturnType<typeof intentCountsByStatus>>;
    orderCounts: Awaited<ReturnType<typeof orderCountsByStatus>>;
    latest: Awaited<ReturnType<typeof latestIntents>>;
    refundNote: RefundNote;
  };
}
