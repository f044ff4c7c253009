import { assetFolder, besideModule, SHARED_ASSETS_DIR, templateFolder, type CustomerPage } from '../../http/views.js';
import {
  fillParts,
  formatNumber,
  isolatedPart,
  keepLang,
  ltrPart,
  moneyPart,
  type Lang,
  type LangChoice,
  type TextPart,
} from '../../lib/i18n.js';
import { secretBase62 } from '../../lib/ids.js';
import { MAX_PIN_ATTEMPTS, PIN_LOCK_MINUTES } from '../wallets/service.js';
import { walletDictionaries, type WalletText } from './i18n.js';
import { MANIFEST_PATH, THEME_COLOR } from './install.js';
import type { HistoryEntry, HistoryPage } from './history.js';
import type { PendingRequest } from './store.js';

/** The wallet app's script and the shared stylesheet, served under /wallet/assets/. */
export const walletAssets = assetFolder('/wallet/assets', [besideModule(import.meta.url, 'assets'), SHARED_ASSETS_DIR]);
const VIEWS = templateFolder(import.meta.url);

export const WALLET = '/wallet';

/** What every page render needs: the language chosen and the page's own path (for the language links). */
export interface PageContext {
  choice: LangChoice;
  path: string;
}

/** What a page says at its top after a form: good news, or what went wrong. */
export interface Notice {
  kind: 'ok' | 'error';
  parts: TextPart[];
}

/** A text of the dictionary as a notice, its values filled (the PIN lock rule's always available). */
export function notice(
  lang: Lang,
  kind: Notice['kind'],
  key: WalletText,
  values: Readonly<Record<string, TextPart>> = {},
): Notice {
  const t = walletDictionaries[lang];
  const rule = {
    attempts: ltrPart(formatNumber(MAX_PIN_ATTEMPTS, lang)),
    minutes: ltrPart(formatNumber(PIN_LOCK_MINUTES, lang)),
  };
  return { kind, parts: fillParts(t[key], { ...rule, ...values }) };
}

export const merchantPart = isolatedPart;
export const amountPart = moneyPart;

/** A form's action in the page's language (`?lang=` kept when the reader chose it). */
export function action(path: string, choice: LangChoice): string {
  return keepLang(`${WALLET}${path}`, choice);
}

/** Seconds left as a countdown shows them: `m:ss`, or `h:mm:ss` from an hour. The script writes the same. */
export function countdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  return hours > 0 ? `${hours}:${two(minutes)}:${two(s % 60)}` : `${minutes}:${two(s % 60)}`;
}

function page(
  context: PageContext,
  template: 'sign-in' | 'home',
  status: number,
  title: string,
  data: Record<string, unknown>,
  pageData?: Record<string, unknown>,
): CustomerPage {
  const t = walletDictionaries[context.choice.lang];
  return {
    status,
    template: `${VIEWS}/${template}`,
    choice: context.choice,
    path: context.path,
    title,
    assets: walletAssets,
    languagesLabel: t.languages,
    data: { t, action: (path: string) => action(path, context.choice), ...data },
    install: { manifest: keepLang(MANIFEST_PATH, context.choice), icon: '/wallet/icon.svg', themeColor: THEME_COLOR },
    ...(pageData ? { pageData, scripts: ['wallet.js'] } : {}),
  };
}

export interface SignInForm {
  sandbox: boolean;
  loginToken: string;
  phone?: string | undefined;
  notice?: Notice | undefined;
}

/** `GET /wallet` signed out: the phone and PIN form (a plain form, no script). */
export function signInPage(context: PageContext, status: number, form: SignInForm): CustomerPage {
  const t = walletDictionaries[context.choice.lang];
  return page(context, 'sign-in', status, t.signInTitle, {
    sandbox: form.sandbox,
    loginToken: form.loginToken,
    phone: form.phone ?? '',
    notice: form.notice ?? null,
  });
}

export interface HomeContent {
  csrfToken: string;
  phone: string;
  sandbox: boolean;
  balance: number;
  pending: PendingRequest[];
  muted: { businessId: string; name: string }[];
  history: HistoryPage;
  /** Whether this page of history is an older one (it links back to the newest). */
  olderPage: boolean;
  notice?: Notice | undefined;
  now: Date;
}

const HISTORY_TEXTS: Record<HistoryEntry['kind'], WalletText> = {
  PAYMENT: 'paidTo',
  PAYOUT: 'payoutFrom',
};
const FOLLOW_UP_TEXTS: Record<'REFUND' | 'ADJUSTMENT', WalletText> = {
  REFUND: 'refundFrom',
  ADJUSTMENT: 'orderChanged',
};

/** `GET /wallet` signed in: the balance, the requests waiting for an answer, the muted merchants and the history. */
export function homePage(context: PageContext, status: number, content: HomeContent): CustomerPage {
  const t = walletDictionaries[context.choice.lang];
  const pending = content.pending.map((request) => ({
    ...request,
    secondsLeft: Math.max(0, Math.floor((request.expiresAt.getTime() - content.now.getTime()) / 1000)),
    remaining: countdown((request.expiresAt.getTime() - content.now.getTime()) / 1000),
  }));
  // The countdown is an element the script rewrites, so the text around it is drawn in two halves.
  const [timeLeftBefore = '', timeLeftAfter = ''] = t.timeLeft.split('{time}');
  const history = content.history.entries.map((entry) => ({
    ...entry,
    label: t[HISTORY_TEXTS[entry.kind]],
    incoming: entry.kind !== 'PAYMENT',
    fee: entry.kind === 'PAYMENT' ? entry.fee : 0,
    followUps: (entry.kind === 'PAYMENT' ? entry.followUps : []).map((followUp) => ({
      ...followUp,
      label: t[FOLLOW_UP_TEXTS[followUp.kind]],
    })),
  }));
  const older = content.history.older;
  return page(
    context,
    'home',
    status,
    t.appName,
    {
      ...content,
      pending,
      history,
      olderHref: older === undefined ? null : action(`?before=${encodeURIComponent(older)}#history`, context.choice),
      newestHref: content.olderPage ? action('#history', context.choice) : null,
      timeLeftBefore,
      timeLeftAfter,
      notice: content.notice ?? null,
      // Each form's own key for the one write path: a second submit of the same form replays the first answer.
      formToken: () => secretBase62(24),
    },
    { events: `${WALLET}/events` },
  );
}
