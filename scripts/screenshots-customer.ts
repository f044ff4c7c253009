/**
 * Every customer page, in every language, on a phone and a laptop, as pictures a person can look
 * through: `npx tsx scripts/screenshots-customer.ts [outdir]` (default screenshots/customer/,
 * which git ignores). Starts the app in this process (the test harness, an embedded database
 * thrown away at the end), makes the pages' states as the browser tests do
 * (test/browser/customer-seed.ts), and drives Debian's Chromium (playwright-core): one whole-page
 * PNG per state, language and size, named `{state}-{lang}-{size}.png`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { LANGS } from '../src/lib/i18n.js';
import { CHROMIUM, launchChromium, skipWithoutChromium } from '../test/support/browser.js';
import { startTestApp } from '../test/support/harness.js';
import { openState, seedCustomerPages, SIZES } from '../test/browser/customer-seed.js';

function say(line: string): void {
  process.stdout.write(`screenshots-customer: ${line}\n`);
}

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

async function main(): Promise<void> {
  if (skipWithoutChromium) throw new Error(skipWithoutChromium);
  const out = path.resolve(process.argv[2] ?? path.join('screenshots', 'customer'));
  mkdirSync(out, { recursive: true });
  const t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  try {
    const { shopId, pages } = await seedCustomerPages(t);
    const browser = await launchChromium();
    try {
      let written = 0;
      for (const [size, viewport] of Object.entries(SIZES)) {
        const context = await browser.newContext({ viewport, locale: 'en-US' });
        const page = await context.newPage();
        await page.goto(`${t.baseUrl}/pay`);
        for (const lang of LANGS) {
          for (const state of pages) {
            await openState(page, t.baseUrl, shopId, state, lang);
            await page.screenshot({ path: path.join(out, `${slug(state.name)}-${lang}-${size}.png`), fullPage: true });
            written += 1;
          }
        }
        await context.close();
      }
      say(`${written} pictures of ${pages.length} page states in ${out} (Chromium: ${CHROMIUM})`);
    } finally {
      await browser.close();
    }
  } finally {
    await t.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `screenshots-customer: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
