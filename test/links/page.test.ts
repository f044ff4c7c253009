import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount, type Lang } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { linkPageDictionaries } from '../../src/modules/links/i18n.js';
import { qrMatrix } from '../../src/modules/links/qr.js';
import { manualClock } from '../support/clock.js';
import { expectError, expectStatus, sharedDatabase, startTestApp, type TestApp } from '../support/harness.js';
import { englishLeaks, pageDataOf, visibleTexts } from '../support/i18n.js';
import { RICH } from '../checkout/support.js';
import { createLink, payLink, slugOf } from './support.js';

/** Both English dictionaries the page reads: a French or Arabic page shows neither. */
const english = { ...checkoutDictionaries.en, ...linkPageDictionaries.en };

/** The page's text on one line, as a reader sees it (tags gone, no-break spaces as spaces). */
function readable(html: string): string {
  return visibleTexts(html)
    .at(-1)!
    .replace(/[\u00a0\u202f]/g, ' ');
}

const htmlLang = (html: string) => /<html lang="(\w+)" dir="(\w+)">/.exec(html)?.slice(1);

/** Issue 50 items 2 and 4: a payment link's page, its QR codes and its poster. */
describe('payment link page, QR codes and poster (issue 50)', () => {
  let t: TestApp;
  let sk: string;
  let businessId: string;
  let fixed: any;
  let open: any;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    const business = await t.createBusiness({ name: 'Boutique <Nour>' });
    sk = business.keys.secretTest;
    businessId = business.id;
    fixed = await createLink(t, sk, { label: 'Panier du jour', amountType: 'FIXED', amount: 25_000 });
    open = await createLink(t, sk, {
      label: 'Don libre',
      amountType: 'OPEN',
      minAmount: 1_000,
      maxAmount: 50_000,
      collect: { name: true, note: true },
    });
  });
  afterAll(() => t?.close());

  const page = (path: string, headers: Record<string, string> = {}) => t.request('GET', path, { headers });

  test('a FIXED link: the shop, the label, the amount and the wallet form, in each language', async () => {
    for (const lang of ['en', 'fr', 'ar'] as const) {
      const response = await page(`/l/${slugOf(fixed)}?lang=${lang}`);
      expectStatus(response, 200);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.match(response.headers.get('content-security-policy') ?? '', /script-src 'nonce-/);
      assert.deepEqual(htmlLang(response.text), [lang, lang === 'ar' ? 'rtl' : 'ltr']);
      assert.ok(response.text.includes('<h1 id="label"><bdi>Panier du jour</bdi></h1>'));
      assert.ok(response.text.includes('<bdi>Boutique &lt;Nour&gt;</bdi>'), 'the shop, escaped');
      assert.ok(response.text.includes(`<bdi class="money">${formatAmount(25_000, lang)}</bdi>`));
      assert.match(response.text, /<input id="phone" name="phone" dir="ltr" type="tel"/);
      assert.match(response.text, /<input id="pin" name="pin" dir="ltr" type="password"/);
      assert.ok(!response.text.includes('id="amount"'), 'no amount field on a FIXED link');
      assert.ok(!response.text.includes('id="name"'), 'no name field when the link does not ask');
      assert.match(response.text, /src="\/l\/assets\/link\.js\?v=[0-9a-f]{16}"/);
      const data = pageDataOf(response.text)!;
      assert.equal(data.slug, slugOf(fixed));
      assert.equal(data.lang, lang);
      assert.equal(data.open, false);
      // The refusals the API may answer once the link is gone, worded in the page's language.
      assert.equal(data.errors.byCode.PAYMENT_LINK_COMPLETED, linkPageDictionaries[lang].errUnavailable);
      assert.ok(data.errors.byCode.INVALID_PIN.startsWith(checkoutDictionaries[lang].errInvalidPin.slice(0, 12)));
      assert.equal(data.errors.byCode.RATE_LIMITED, checkoutDictionaries[lang].rateLimited);
      if (lang !== 'en') assert.deepEqual(englishLeaks(response.text, english), [], lang);
    }
  });

  test('an OPEN link: an amount field with its bounds, the name (required) and the note it asks for', async () => {
    const response = await page(`/l/${slugOf(open)}?lang=fr`);
    expectStatus(response, 200);
    assert.match(response.text, /<input id="amount" name="amount" dir="ltr" inputmode="decimal"/);
    assert.ok(readable(response.text).includes('De 10,00 MRU à 500,00 MRU'));
    assert.match(
      response.text,
      /<label for="name">Votre nom<\/label>\s*<input id="name" name="name"[^>]* maxlength="100" required>/,
    );
    assert.match(
      response.text,
      /<label for="note">Note \(facultative\)<\/label>\s*<input id="note" name="note"[^>]* maxlength="500">/,
    );
    const data = pageDataOf(response.text)!;
    assert.deepEqual([data.open, data.minAmount, data.maxAmount, data.collectName], [true, 1_000, 50_000, true]);
    assert.equal(
      data.errors.byCode.AMOUNT_OUT_OF_RANGE,
      `${checkoutDictionaries.fr.errAmountOutOfRange} De 10,00\u00a0MRU à 500,00\u00a0MRU`,
    );
    assert.equal(data.errors.byCode['VALIDATION_ERROR:body.name'], 'Saisissez votre nom.');
    assert.deepEqual(englishLeaks(response.text, english), []);
    const arabic = await page(`/l/${slugOf(open)}?lang=ar`);
    assert.ok(arabic.text.includes(`من <bdi class="money">${formatAmount(1_000, 'ar')}</bdi> إلى`));
    assert.deepEqual(englishLeaks(arabic.text, english), []);
    const onlyMin = await createLink(t, sk, { label: 'Cotisation', amountType: 'OPEN', minAmount: 500 });
    assert.ok(readable((await page(`/l/${slugOf(onlyMin)}`)).text).includes('At least 5.00 MRU'));
  });

  test('the language follows Accept-Language; ?lang= wins; the language links keep the page', async () => {
    const path = `/l/${slugOf(fixed)}`;
    assert.deepEqual(htmlLang((await page(path, { 'accept-language': 'ar-MR,fr;q=0.5' })).text), ['ar', 'rtl']);
    assert.deepEqual(htmlLang((await page(path, { 'accept-language': 'fr-FR' })).text), ['fr', 'ltr']);
    assert.deepEqual(htmlLang((await page(`${path}?lang=en`, { 'accept-language': 'fr-FR' })).text), ['en', 'ltr']);
    assert.deepEqual(htmlLang((await page(`${path}?lang=xx`)).text), ['en', 'ltr']);
    assert.ok((await page(path)).text.includes(`href="${path}?lang=ar" hreflang="ar"`));
  });

  test('a sandbox link shows the test-mode banner and the test wallets', async () => {
    const response = await page(`/l/${slugOf(fixed)}?lang=ar`);
    assert.ok(response.text.includes(checkoutDictionaries.ar.testMode));
    assert.ok(response.text.includes(`<bdi dir="ltr">${RICH.phone}</bdi>`));
  });

  test('an unknown slug, or one too long to be a link, is a 404 page in its language', async () => {
    for (const slug of ['nope0000nope', 'x'.repeat(200), '%F0%9F%92%B8']) {
      const response = await page(`/l/${slug}?lang=fr`);
      assert.equal(response.status, 404, slug);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.ok(readable(response.text).includes(linkPageDictionaries.fr.linkNotFound));
      assert.ok(!response.text.includes('<form'));
      assert.deepEqual(englishLeaks(response.text, english), []);
    }
    expectError(await page('/l/nope0000nope/qr.svg'), 404, 'PAYMENT_LINK_NOT_FOUND');
    expectError(await page('/l/nope0000nope/qr.png'), 404, 'PAYMENT_LINK_NOT_FOUND');
    const poster = await page('/l/nope0000nope/poster?lang=ar');
    assert.equal(poster.status, 404);
    assert.ok(readable(poster.text).includes(linkPageDictionaries.ar.linkNotFound));
  });

  test('a link that takes no payment says why, with no form: inactive (with its message), completed, expired, business off', async () => {
    const inactive = await createLink(t, sk, { label: 'Fermé', amountType: 'FIXED', amount: 500 });
    expectStatus(
      await t.request('PATCH', `/api/v1/dev/payment-links/${inactive.referenceNumber}`, {
        key: sk,
        body: { active: false, inactiveMessage: 'De retour lundi' },
        idempotencyKey: true,
      }),
      200,
    );
    const completed = await createLink(t, sk, { label: 'Unique', amountType: 'FIXED', amount: 500, maxPayments: 1 });
    expectStatus(await payLink(t, completed, RICH), 200);
    const expired = await createLink(t, sk, {
      label: 'Passé',
      amountType: 'FIXED',
      amount: 500,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await t.runtime.db
      .updateTable('payment_links')
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where('reference_number', '=', expired.referenceNumber)
      .execute();
    const states = [
      { link: inactive, code: 'PAYMENT_LINK_INACTIVE', key: 'inactive' },
      { link: completed, code: 'PAYMENT_LINK_COMPLETED', key: 'completed' },
      { link: expired, code: 'PAYMENT_LINK_EXPIRED', key: 'expired' },
    ] as const;
    for (const lang of ['en', 'fr', 'ar'] as const) {
      for (const { link, code, key } of states) {
        const response = await page(`/l/${slugOf(link)}?lang=${lang}`);
        expectStatus(response, 200);
        assert.ok(response.text.includes(`data-state="${code}"`), code);
        assert.ok(readable(response.text).includes(linkPageDictionaries[lang][key]), `${code} ${lang}`);
        assert.ok(!response.text.includes('<form'), code);
        assert.ok(!response.text.includes('<script'), `${code}: no script on a page with nothing to do`);
        if (lang !== 'en') assert.deepEqual(englishLeaks(response.text, english), [], `${code} ${lang}`);
      }
      const inactivePage = await page(`/l/${slugOf(inactive)}?lang=${lang}`);
      assert.ok(inactivePage.text.includes('<bdi>De retour lundi</bdi>'), "the merchant's message");
    }
    expectStatus(await t.admin('POST', '/api/disable', { businessId }), 200);
    try {
      const off = await page(`/l/${slugOf(fixed)}?lang=fr`);
      assert.ok(off.text.includes('data-state="FEATURE_DISABLED"'));
      assert.ok(readable(off.text).includes('Boutique <Nour> n’accepte pas de paiement par ce lien pour le moment.'));
      assert.ok(!off.text.includes('<form'));
    } finally {
      expectStatus(await t.admin('POST', '/api/enable', { businessId }), 200);
    }
  });

  test('the QR codes: the link URL as SVG and PNG, cacheable, with their content types', async () => {
    const slug = slugOf(fixed);
    const svg = await page(`/l/${slug}/qr.svg`);
    expectStatus(svg, 200);
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    assert.equal(svg.headers.get('cache-control'), 'public, max-age=86400');
    assert.equal(svg.headers.get('x-content-type-options'), 'nosniff');
    assert.match(svg.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1">/);
    const etag = svg.headers.get('etag')!;
    assert.match(etag, /^"[0-9a-f]{16}"$/);
    const again = await fetch(`${t.baseUrl}/l/${slug}/qr.svg`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    await again.body?.cancel();

    const response = await fetch(`${t.baseUrl}/l/${slug}/qr.png`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/png');
    assert.equal(response.headers.get('cache-control'), 'public, max-age=86400');
    assert.notEqual(response.headers.get('etag'), etag, 'each format its own ETag');
    const png = PNG.sync.read(Buffer.from(await response.arrayBuffer()));
    // The PNG draws the matrix of the link's own URL, module for module.
    const matrix = qrMatrix(fixed.url);
    const modulePx = png.width / matrix.length;
    assert.equal(png.width, png.height);
    assert.ok(Number.isInteger(modulePx) && modulePx >= 4, `${modulePx} px a module`);
    for (let y = 0; y < matrix.length; y++) {
      for (let x = 0; x < matrix.length; x++) {
        const pixel = png.data[((y * modulePx + modulePx / 2) * png.width + x * modulePx + modulePx / 2) * 4];
        assert.equal(pixel, matrix[y]![x] ? 0 : 255, `module ${x},${y}`);
      }
    }
    assert.ok(svg.text.split('h10v10h-10z').length - 1 === matrix.flat().filter(Boolean).length);
  });

  test('the poster: A5 print, the shop, the label, the amount or "amount of your choice", the QR and how to pay', async () => {
    for (const lang of ['en', 'fr', 'ar'] as const satisfies readonly Lang[]) {
      const t2 = linkPageDictionaries[lang];
      const response = await page(`/l/${slugOf(fixed)}/poster?lang=${lang}`);
      expectStatus(response, 200);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.deepEqual(htmlLang(response.text), [lang, lang === 'ar' ? 'rtl' : 'ltr']);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.ok(csp.includes("img-src 'self'") && csp.includes("form-action 'none'") && !csp.includes('script-src'));
      assert.ok(response.text.includes('<p class="shop" id="merchant"><bdi>Boutique &lt;Nour&gt;</bdi></p>'));
      assert.ok(response.text.includes('<h1 id="label"><bdi>Panier du jour</bdi></h1>'));
      assert.ok(response.text.includes(`<bdi class="money">${formatAmount(25_000, lang)}</bdi>`));
      assert.ok(response.text.includes(`<img class="qr" id="qr" src="/l/${slugOf(fixed)}/qr.svg" alt="${t2.qrAlt}"`));
      assert.ok(response.text.includes(`<bdi dir="ltr">${fixed.url}</bdi>`));
      assert.ok(response.text.includes(`<p class="how" id="how">${t2.scanToPay.replace(/'/g, '&#39;')}</p>`));
      assert.ok(!/<script|\sstyle="|<style/.test(response.text), 'no script, no inline style');
      if (lang !== 'en') assert.deepEqual(englishLeaks(response.text, english), [], lang);
      const openPoster = await page(`/l/${slugOf(open)}/poster?lang=${lang}`);
      assert.ok(openPoster.text.includes(`<p class="amount" id="amount">${t2.amountOfChoice}</p>`));
      assert.ok(openPoster.text.includes(`<bdi class="money">${formatAmount(50_000, lang)}</bdi>`), 'its bounds');
    }
    const stylesheet = /href="(\/l\/assets\/poster\.css\?v=[0-9a-f]{16})"/.exec(
      (await page(`/l/${slugOf(fixed)}/poster`)).text,
    )![1]!;
    const css = await page(stylesheet);
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.match(css.text, /@page \{\s*size: A5;/);
    assert.match(css.text, /@media print \{/);
  });

  test('viewing a link writes nothing: no intent, no payment code, no row anywhere', async () => {
    const counts = async () => {
      const tables = await sql<{ name: string }>`
        SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(t.runtime.db);
      const result: Record<string, number> = {};
      for (const { name } of tables.rows) {
        const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(name)}`.execute(t.runtime.db);
        result[name] = Number(rows[0]!.n);
      }
      return result;
    };
    const before = await counts();
    assert.ok(Object.keys(before).includes('payment_intents'));
    for (const link of [fixed, open]) {
      for (const path of ['', '?lang=ar', '/qr.svg', '/qr.png', '/poster?lang=fr']) {
        assert.ok([200].includes((await page(`/l/${slugOf(link)}${path}`)).status), path);
      }
      expectStatus(await t.request('GET', `/checkout/links/${slugOf(link)}`), 200);
    }
    assert.deepEqual(await counts(), before);
  });

  test('the page is paid through the link API, then the receipt is the checkout page in the language kept', async () => {
    const paid = await payLink(t, open, { ...RICH, amount: 12_345, name: 'Aïcha' });
    expectStatus(paid, 200);
    const receipt = await page(`/p/${paid.body.data.shortCode}?lang=ar`);
    expectStatus(receipt, 200);
    assert.ok(receipt.text.includes('id="receipt"'));
    assert.ok(receipt.text.includes(`<bdi class="money">${formatAmount(12_345, 'ar')}</bdi>`));
  });

  test('the page, its poster and its QR codes count against the per-address limit (429 in the language, Retry-After)', async () => {
    const clocked = await startTestApp({ clock: manualClock(), testDatabase: sharedDatabase(t.testDatabase) });
    try {
      let last;
      for (let i = 0; i <= 120; i++) last = await clocked.request('GET', `/l/${slugOf(fixed)}/qr.svg`);
      expectError(last!, 429, 'RATE_LIMITED');
      for (const path of [`/l/${slugOf(fixed)}?lang=ar`, `/l/${slugOf(fixed)}/poster?lang=fr`]) {
        const response = await clocked.request('GET', path);
        assert.equal(response.status, 429, path);
        assert.ok(Number(response.headers.get('retry-after')) >= 1);
        const lang = path.endsWith('ar') ? 'ar' : 'fr';
        assert.ok(readable(response.text).includes(checkoutDictionaries[lang].rateLimited), path);
        assert.ok(!response.text.includes('<form'));
      }
      expectError(await clocked.request('GET', `/l/${slugOf(fixed)}/qr.png`), 429, 'RATE_LIMITED');
    } finally {
      await clocked.close();
    }
  });
});
