import type { FastifyRequest } from 'fastify';
import { langOf } from './context.js';
import { formatPageAmount } from '../../lib/i18n.js';
import { sharedWords } from './i18n.js';
import type { RefundNote } from './view-types.js';

/**
 * "50.00 of 125.00 MRU refunded" beside a "Partly refunded" badge (`badgeStatus`, statuses.ts): the
 * API says REFUNDED after any refund (its status values stay as they are), the dashboard says how
 * much. Undefined when nothing or everything was refunded.
 */
export function partialRefundNote(request: FastifyRequest): RefundNote {
  const lang = langOf(request);
  const mru = (centimes: number) => formatPageAmount(centimes, lang);
  return (paid, refunded) => {
    if (paid === null || refunded <= 0 || refunded >= paid) return undefined;
    // The currency once, after the second amount.
    const part = formatPageAmount(refunded, lang).replace(/\s\S+$/, '');
    return sharedWords(lang).refundedOfPaid.replace('{refunded}', part).replace('{paid}', mru(paid));
  };
}
