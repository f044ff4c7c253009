import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { keyedWrite, walletFormScope } from '../../http/idempotency/plugin.js';
import type { Lang } from '../../lib/i18n.js';
import type { WalletText } from './i18n.js';
import { amountPart, merchantPart, notice, type Notice } from './pages.js';
import type { WalletSession } from './sessions.js';

/**
 * A notice as a form's key keeps it: its words by their dictionary key and the values they are
 * filled with as plain data, so that a replay says it again in the language of the page that
 * resends the form.
 */
export interface KeptNotice {
  kind: Notice['kind'];
  text: WalletText;
  merchant?: string;
  amount?: number;
}

/** What a signed-in wallet form answers: the home page with a notice, or back to the home page (sign-out). */
export type FormAnswer = { kind: 'notice'; status: number; notice: KeptNotice } | { kind: 'home' };

export function noticeOf(lang: Lang, kept: KeptNotice): Notice {
  return notice(lang, kept.kind, kept.text, {
    ...(kept.merchant !== undefined ? { merchant: merchantPart(kept.merchant) } : {}),
    ...(kept.amount !== undefined ? { amount: amountPart(kept.amount, lang) } : {}),
  });
}

/** A form's write, in two steps: its key is read first (a form without its token is refused before a PIN is checked). */
export interface WalletFormWrite {
  /** Runs `work` in the one write path's transaction; a repeat of the form answers what the first did. */
  run(work: (trx: Transaction<DB>) => Promise<FormAnswer>): Promise<{ answer: FormAnswer; replayed: boolean }>;
}

/**
 * A signed-in wallet form through the one write path (`config.write: WALLET_FORM_WRITE`): the
 * form's `_idem` token is the key, in the wallet's scope. The answer kept is the notice, not the
 * page: a replay draws the page as it is now, with the first answer's notice.
 */
export function walletFormWrite(request: FastifyRequest, session: WalletSession): WalletFormWrite {
  const keyed = keyedWrite(request, walletFormScope(session.environment, session.walletId));
  return {
    async run(work) {
      const outcome = await keyed.run(async (trx) => {
        const answer = await work(trx);
        return { value: answer, stored: { status: 200, body: JSON.stringify(answer) } };
      });
      if (outcome.kind === 'replay') return { answer: JSON.parse(outcome.body) as FormAnswer, replayed: true };
      return { answer: outcome.value, replayed: false };
    },
  };
}
