import { defineDictionaries } from '../../../../lib/i18n.js';

/** The home page's own words in every language (the words pages share are in texts/). */
export const homeTexts = defineDictionaries({
  en: {
    today: 'Today',
    last30Days: 'Last 30 days',
    volumeChart: 'Paid volume per day over the last 30 days',
    countsByStatus: 'Payments by status',
    refundedCountsPartly: 'Refunded counts the partly refunded payments too.',
    latestPayments: 'Latest payments',
    // Figures that add up and forms a merchant can use (issue 38 items 2 and 3)
    // Home figures
    paidCount: '{count} paid (payments and orders)',
    volumeHint: 'Payments and storefront orders, by day of payment (UTC).',
    ordersByStatus: 'Orders by status',
    chartValues: 'Values per day',
    chartDay: 'Day',
    volume: 'Paid volume',
    chartSummary: 'Highest day: {max}. Total over 30 days: {total}.',
  },
  fr: {
    today: "Aujourd'hui",
    last30Days: '30 derniers jours',
    volumeChart: 'Volume payé par jour sur les 30 derniers jours',
    countsByStatus: 'Paiements par statut',
    refundedCountsPartly: 'Remboursé compte aussi les paiements remboursés en partie.',
    latestPayments: 'Derniers paiements',
    // Figures that add up and forms a merchant can use (issue 38 items 2 and 3)
    paidCount: '{count} payés (paiements et commandes)',
    volumeHint: 'Paiements et commandes de la boutique, par jour de paiement (UTC).',
    ordersByStatus: 'Commandes par statut',
    chartValues: 'Valeurs par jour',
    chartDay: 'Jour',
    volume: 'Volume payé',
    chartSummary: 'Meilleur jour : {max}. Total sur 30 jours : {total}.',
  },
  ar: {
    today: 'اليوم',
    last30Days: 'آخر 30 يومًا',
    volumeChart: 'المبالغ المدفوعة يوميًا خلال آخر 30 يومًا',
    countsByStatus: 'المدفوعات حسب الحالة',
    refundedCountsPartly: 'تشمل حالة «مُسترد» المدفوعات المستردة جزئيًا أيضًا.',
    latestPayments: 'آخر المدفوعات',
    // Figures that add up and forms a merchant can use (issue 38 items 2 and 3)
    paidCount: '{count} مدفوعة (مدفوعات وطلبات)',
    volumeHint: 'المدفوعات وطلبات المتجر، حسب يوم الدفع (بالتوقيت العالمي).',
    ordersByStatus: 'الطلبات حسب الحالة',
    chartValues: 'القيم اليومية',
    chartDay: 'اليوم',
    volume: 'المبلغ المدفوع',
    chartSummary: 'أعلى يوم: {max}. المجموع خلال 30 يومًا: {total}.',
  },
});
