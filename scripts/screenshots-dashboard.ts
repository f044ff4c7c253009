/**
 * Every dashboard page, in every language, on a phone and a laptop, as pictures a person can look
 * through: `npx tsx scripts/screenshots-dashboard.ts [outdir]` (default screenshots/dashboard/,
 * which git ignores). Starts the app in this process (the test harness, an embedded database
 * thrown away at the end), fills one business as the browser test does
 * (test/browser/dashboard-seed.ts), signs in from the sign-in page of each language and drives
 * Debian's Chromium (playwright-core): one whole-page PNG per page, language and size, named
 * `{page}-{lang}-{size}.png`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { LANGS } from '../src/lib/i18n.js';
import { CHROMIUM, launchChromium, skipWithoutChromium } from '../test/support/browser.js';
import { startTestApp } from '../test/support/harness.js';
import { DASHBOARD_APP_CONFIG, seedDashboard, signInAs, SIZES } from '../test/browser/dashboard-seed.js';

function say(line: string): void {
  process.stdout.write(`screenshots-dashboard: ${line}\n`);
}

async function main(): Promise<void> {
  if (skipWithoutChromium) throw new Error(skipWithoutChromium);
  const out = path.resolve(process.argv[2] ?? path.join('screenshots', 'dashboard'));
  mkdirSync(out, { recursive: true });
  const t = await startTestApp({
    config: DASHBOARD_APP_CONFIG,
  });
  try {
    const { owner, pages } = await seedDashboard(t);
    const browser = await launchChromium();
    try {
      let written = 0;
      for (const [size, viewport] of Object.entries(SIZES)) {
        const context = await browser.newContext({ viewport, locale: 'en-US' });
        const page = await context.newPage();
        for (const lang of LANGS) {
          await page.goto(`${t.baseUrl}/dashboard/login?lang=${lang}`);
          await page.screenshot({ path: path.join(out, `login-${lang}-${size}.png`), fullPage: true });
          await signInAs(page, t.baseUrl, owner, lang);
          for (const under of pages) {
            await page.goto(`${t.baseUrl}${under.path}`);
            await page.screenshot({ path: path.join(out, `${under.name}-${lang}-${size}.png`), fullPage: true });
            written += 1;
          }
          await page.locator('#sign-out').click();
          await page.waitForURL(/\/dashboard\/login/);
          written += 1;
        }
        await context.close();
      }
      say(`${written} pictures of ${pages.length + 1} pages in ${out} (Chromium: ${CHROMIUM})`);
    } finally {
      await browser.close();
    }
  } finally {
    await t.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `screenshots-dashboard: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
