import type { FastifyRequest } from 'fastify';
import { langOf } from './context.js';
import { dictionaries, formatMru } from './i18n.js';

/**
 * "Partially refunded · 50.00 of 125.00 MRU" beside a status: the API says REFUNDED after any
 * refund (its status values stay as they are), the dashboard says how much. Undefined when
 * nothing or everything was refunded.
 */
export function partialRefundNote(request: FastifyRequest) {
  const lang = langOf(request);
  const mru = (centimes: number) => formatMru(centimes, lang);
  return (paid: number | null, refunded: number): string | undefined => {
    if (paid === null || refunded <= 0 || refunded >= paid) return undefined;
    // The currency once, after the second amount.
    const part = mru(refunded).replace(/\s?MRU$/, '');
    return dictionaries[lang].partiallyRefunded.replace('{refunded}', part).replace('{paid}', mru(paid));
  };
}
