import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { fillText, formatAmount, formatNumber, LANGS, type Lang } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { MAX_PIN_ATTEMPTS, PIN_LOCK_MINUTES } from '../../src/modules/wallets/service.js';
import { manualClock } from '../support/clock.js';
import { expectStatus, sharedDatabase, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { englishLeaks, pageDataOf, visibleTexts } from '../support/i18n.js';
import { act, createIntent } from '../intents/support.js';
import { LOCKED, NEARLY_EMPTY, pay, RICH } from './support.js';

const english = checkoutDictionaries.en;

/** The page's text on one line, as a reader sees it (tags gone, no-break spaces as spaces). */
function readable(html: string): string {
  return visibleTexts(html)
    .at(-1)!
    .replace(/[\u00a0\u202f]/g, ' ');
}

function pageData(html: string): { errors: { byCode: Record<string, string>; generic: string } } {
  const data = pageDataOf(html);
  assert.ok(data, 'the payable page carries its texts as data');
  return data as { errors: { byCode: Record<string, string>; generic: string } };
}

describe('customer pages in Arabic and French all the way through (issue 19)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  /** Each page in each state: its path and the HTTP status it answers with. */
  const pages: { name: string; path: string; status: number }[] = [];

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Boutique Nouakchott' });
    sk = business.keys.secretTest;
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 0, payerFee: 200, tofBps: 0, tteBps: 0 }),
      200,
    );
    const fixed = await createIntent(t, sk, { amount: 12_500, label: 'Panier' });
    const open = await createIntent(t, sk, { amountType: 'OPEN' });
    const paid = await createIntent(t, sk, { amount: 12_500 });
    expectStatus(await pay(t, paid.shortCode, RICH), 200);
    const expired = await createIntent(t, sk, { amount: 500 });
    expectStatus(await act(t, sk, expired.referenceNumber, 'simulate-expiry'), 200);
    const cancelled = await createIntent(t, sk, { amount: 500 });
    expectStatus(await act(t, sk, cancelled.referenceNumber, 'cancel'), 200);
    const part = await createIntent(t, sk, { amount: 12_500 });
    expectStatus(await pay(t, part.shortCode, RICH), 200);
    expectStatus(await act(t, sk, part.referenceNumber, 'refund', { amount: 4_500 }), 200);
    const full = await createIntent(t, sk, { amount: 12_500 });
    expectStatus(await pay(t, full.shortCode, RICH), 200);
    expectStatus(await act(t, sk, full.referenceNumber, 'refund', {}), 200);
    pages.push(
      { name: 'payable (fixed, with a payer fee)', path: `/p/${fixed.shortCode}`, status: 200 },
      { name: 'payable (open amount)', path: `/p/${open.shortCode}`, status: 200 },
      { name: 'paid', path: `/p/${paid.shortCode}`, status: 200 },
      { name: 'expired', path: `/p/${expired.shortCode}`, status: 200 },
      { name: 'cancelled', path: `/p/${cancelled.shortCode}`, status: 200 },
      { name: 'refunded in part', path: `/p/${part.shortCode}`, status: 200 },
      { name: 'refunded in full', path: `/p/${full.shortCode}`, status: 200 },
      { name: 'not found', path: '/p/nope00', status: 404 },
      { name: 'pay-by-code', path: '/pay?mode=test', status: 200 },
      { name: 'pay-by-code, malformed code', path: '/pay?mode=test&code=12a', status: 400 },
      { name: 'pay-by-code, unknown code', path: `/pay?mode=live&code=${fixed.code}`, status: 404 },
    );
  });
  afterAll(() => t?.close());

  const withLang = (path: string, lang: Lang) => `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`;

  test('no page in any state shows an English text in French or Arabic (and the English page does)', async () => {
    for (const page of pages) {
      for (const lang of ['fr', 'ar'] as const) {
        const response = await t.request('GET', withLang(page.path, lang));
        assert.equal(response.status, page.status, `${page.name} (${lang})`);
        assert.match(response.text, new RegExp(`<html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">`));
        assert.deepEqual(englishLeaks(response.text, english), [], `${page.name} (${lang})`);
      }
      // The check can fail: the same page in English shows English texts.
      const inEnglish = await t.request('GET', page.path);
      assert.notDeepEqual(englishLeaks(inEnglish.text, english), [], `${page.name} (en)`);
    }
  });

  test('a rate-limited page says so in its language, with Retry-After', async () => {
    const clocked = await startTestApp({ clock: manualClock(), testDatabase: sharedDatabase(t.testDatabase) });
    try {
      let last;
      // The per-address limit is 120 a minute; the clock stands still, so all fall in one window.
      for (let i = 0; i <= 120; i++) last = await clocked.request('GET', '/checkout/intents/nope00');
      assert.equal(last?.status, 429);
      for (const lang of ['fr', 'ar'] as const) {
        for (const path of ['/p/nope00', '/pay?mode=test&code=123456']) {
          const response = await clocked.request('GET', withLang(path, lang));
          assert.equal(response.status, 429, path);
          assert.ok(Number(response.headers.get('retry-after')) >= 1);
          assert.ok(readable(response.text).includes(checkoutDictionaries[lang].rateLimited), path);
          assert.deepEqual(englishLeaks(response.text, english), [], `${path} (${lang})`);
        }
      }
    } finally {
      await clocked.close();
    }
  });

  test('a partial refund says how much of how much: "45.00 MRU of 125.00 MRU refunded"', async () => {
    const part = pages.find((page) => page.name === 'refunded in part')!;
    const full = pages.find((page) => page.name === 'refunded in full')!;
    assert.ok(readable((await t.request('GET', part.path)).text).includes('45.00 MRU of 125.00 MRU refunded.'));
    assert.ok(
      readable((await t.request('GET', withLang(part.path, 'fr'))).text).includes(
        '45,00 MRU remboursés sur 125,00 MRU.',
      ),
    );
    const arabic = (await t.request('GET', withLang(part.path, 'ar'))).text;
    assert.ok(
      arabic.includes(
        `تم استرداد <bdi class="money">${formatAmount(4_500, 'ar')}</bdi> من أصل <bdi class="money">${formatAmount(12_500, 'ar')}</bdi>.`,
      ),
    );
    assert.ok(
      readable((await t.request('GET', full.path)).text).includes('This payment of 125.00 MRU was refunded in full.'),
    );
  });

  test('phones, codes and amounts are isolated from the text around them; amounts formatted per language', async () => {
    const fixed = pages[0]!;
    const arabic = (await t.request('GET', withLang(fixed.path, 'ar'))).text;
    for (const wallet of [RICH, NEARLY_EMPTY, LOCKED]) {
      assert.ok(arabic.includes(`<bdi dir="ltr">${wallet.phone}</bdi>`), wallet.phone);
      assert.ok(arabic.includes(`<bdi dir="ltr">${wallet.pin}</bdi>`));
    }
    assert.ok(arabic.includes(`<p class="amount" id="amount-due"><bdi class="money">125.00\u00a0أوقية</bdi></p>`));
    assert.ok(arabic.includes(`<bdi class="money">${formatAmount(200, 'ar')}</bdi>`), 'the payer fee');
    assert.match(arabic, /<input id="phone" name="phone" dir="ltr"/);
    const french = (await t.request('GET', withLang(fixed.path, 'fr'))).text;
    assert.ok(french.includes('<bdi class="money">125,00\u00a0MRU</bdi>'));
    const english = (await t.request('GET', fixed.path)).text;
    assert.ok(english.includes('<bdi class="money">125.00\u00a0MRU</bdi>'));
    const code = (await t.request('GET', '/pay?mode=test&lang=ar')).text;
    assert.match(code, /<input id="code" name="code" dir="ltr"/);
  });

  test('the language follows Accept-Language by q-value; ?lang= overrides it and is kept in links and redirects', async () => {
    const fixed = pages[0]!;
    const lang = async (path: string, header: string) =>
      /<html lang="(\w+)"/.exec((await t.request('GET', path, { headers: { 'accept-language': header } })).text)?.[1];
    assert.equal(await lang(fixed.path, 'en;q=0.1, fr'), 'fr');
    assert.equal(await lang(fixed.path, 'ar-MR,ar;q=0.9'), 'ar');
    assert.equal(await lang(fixed.path, 'de-DE, ar;q=0.2, fr;q=0.3'), 'fr');
    assert.equal(await lang(fixed.path, 'de-DE'), 'en');
    assert.equal(await lang(`${fixed.path}?lang=ar`, 'fr'), 'ar');
    assert.equal(await lang(`${fixed.path}?lang=zz`, 'fr'), 'fr');

    const page = await t.request('GET', '/pay?mode=test&lang=ar', { headers: { 'accept-language': 'fr' } });
    assert.equal(page.headers.get('vary'), 'Accept-Language');
    assert.ok(page.text.includes('href="/pay?mode=test&amp;lang=fr" hreflang="fr"'), 'language links keep the mode');
    assert.ok(page.text.includes('<input type="hidden" name="lang" value="ar">'), 'the code form keeps the language');
    assert.ok(page.text.includes('<input type="hidden" name="mode" value="test">'));

    const intent = await createIntent(t, sk, { amount: 700 });
    const follow = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${t.baseUrl}/pay?${query}`, { redirect: 'manual', headers });
    const chosen = await follow(`mode=test&code=${intent.code}&lang=ar`);
    assert.equal(chosen.status, 303);
    assert.equal(chosen.headers.get('location'), `/p/${intent.shortCode}?lang=ar`);
    const negotiated = await follow(`mode=test&code=${intent.code}`, { 'accept-language': 'ar' });
    assert.equal(negotiated.headers.get('location'), `/p/${intent.shortCode}`);
    await chosen.body?.cancel();
    await negotiated.body?.cancel();
  });

  test("the pages map the API's error codes to their own texts; the API's message stays English", async () => {
    const intent = await createIntent(t, sk, { amount: 700_000 });
    const wrongPin = await pay(t, intent.shortCode, { phone: RICH.phone, pin: '9999' });
    const provoked = [
      wrongPin,
      await pay(t, intent.shortCode, LOCKED),
      await pay(t, intent.shortCode, NEARLY_EMPTY),
      await pay(t, intent.shortCode, { phone: '2222000000', pin: '1234' }),
      await pay(t, intent.shortCode, { phone: RICH.phone, pin: '12' }),
    ];
    assert.equal(wrongPin.body.error.message, 'Wrong phone number or PIN.');
    const keys = [
      'errInvalidPin',
      'errWalletLocked',
      'errInsufficientBalance',
      'errPhoneInvalid',
      'errPinInvalid',
    ] as const;
    for (const lang of LANGS) {
      const { errors } = pageData((await t.request('GET', `/p/${intent.shortCode}?lang=${lang}`)).text);
      provoked.forEach((response, i) => {
        const { code, details } = response.body.error;
        const shown = errors.byCode[`${code}:${details?.[0]?.field}`] ?? errors.byCode[code] ?? errors.generic;
        const expected = fillText(checkoutDictionaries[lang][keys[i]!], {
          attempts: formatNumber(MAX_PIN_ATTEMPTS, lang),
          minutes: formatNumber(PIN_LOCK_MINUTES, lang),
        });
        assert.equal(shown, expected, `${code} in ${lang}`);
      });
    }
  });
});
