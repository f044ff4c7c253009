import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { INTL_LOCALES, type Lang } from '../../../../lib/i18n.js';
import { accountBalance } from '../../../payments/ledger.js';
import { can } from '../../../team/permissions.js';
import { barChart, chartDates } from '../../chart.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { intentCountsByStatus, latestIntents, orderCountsByStatus, paidVolumeByDay } from '../../queries.js';
import { partialRefundNote } from '../../refund-note.js';

const LATEST = 8;

/** A value of the chart's axis in whole MRU, short ("12K", "1,5 M"): the chart's title says MRU. */
function axisLabel(lang: Lang) {
  // The language's locale as every figure uses it (Arabic with the Latin digits of its amounts).
  const format = new Intl.NumberFormat(INTL_LOCALES[lang], { notation: 'compact', maximumFractionDigits: 1 });
  return (centimes: number) => format.format(centimes / 100);
}

export const homePages: FastifyPluginAsyncTypebox = async (app) => {
  const { database, db } = app.services;

  app.get(at(DASHBOARD), { config: { dashboard: 'payments.read' }, schema: { hide: true } }, async (request, reply) => {
    const session = requireSession(request);
    const scope = { businessId: session.businessId, environment: session.environment };
    const [available, days, counts, orderCounts, latest] = await Promise.all([
      // The balance is for the roles that may see it (a developer or support member sees the rest).
      can(session.role, 'balance.read')
        ? accountBalance(db, scope.environment, { kind: 'merchant', ownerId: scope.businessId })
        : null,
      paidVolumeByDay(database, scope, 30),
      intentCountsByStatus(database, scope),
      orderCountsByStatus(database, scope),
      latestIntents(database, scope, LATEST),
    ]);
    const today = days[days.length - 1]!;
    const month = days.reduce((sum, day) => ({ total: sum.total + day.total, count: sum.count + day.count }), {
      total: 0,
      count: 0,
    });
    return sendPage(request, reply, 'home', {
      available,
      today,
      month,
      chart: barChart(days),
      chartDate: chartDates(langOf(request)),
      days,
      axisLabel: axisLabel(langOf(request)),
      counts,
      orderCounts,
      latest,
      refundNote: partialRefundNote(request),
    });
  });
};
