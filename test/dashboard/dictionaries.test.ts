import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'vitest';
import { errorCatalogue } from '../../src/http/errors.js';
import type { DictionarySet } from '../../src/lib/i18n.js';
import { dictionaries, errorTexts, eventTexts, sharedWords, wordsFor } from '../../src/modules/dashboard/i18n.js';
import { EVENT_NAMES } from '../../src/modules/events/catalog.js';
import { dictionaryProblems, readSources } from '../support/i18n.js';

const DASHBOARD = 'src/modules/dashboard';

/**
 * Every file that reads the dashboard's keys: its routes and helpers, and every template, in every
 * folder; not the dictionaries themselves (texts/ and each page's texts.ts).
 */
function dashboardSources(): string[] {
  const dictionary = /(^|\/)(i18n\.ts$|texts\/|words\/)/;
  return readdirSync(DASHBOARD, { recursive: true, encoding: 'utf8' })
    .filter((name) => (name.endsWith('.ts') || name.endsWith('.eta')) && !dictionary.test(name))
    .map((name) => `${DASHBOARD}/${name}`);
}

const VIEWS = `${DASHBOARD}/views`;
const PAGES = `${DASHBOARD}/pages`;

/** The templates a page draws: the names its view.ts declares in its `…Views` interface. */
function templatesOf(page: string): string[] {
  const source = readFileSync(`${PAGES}/${page}/view.ts`, 'utf8');
  const block = /export interface \w+Views \{\n([\s\S]*?)\n\}/.exec(source);
  assert.ok(block, `${page}/view.ts declares no …Views interface`);
  return [...block[1]!.matchAll(/^ {2}'?([a-z-]+)'?:/gm)].map((match) => match[1]!);
}

function templateText(name: string): string {
  return readFileSync(`${VIEWS}/${name}.eta`, 'utf8');
}

/** A template with the partials it includes, and theirs: every template whose `it.t` it hands on. */
function withPartials(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const match of templateText(name).matchAll(/include\('([a-z-]+)'/g)) withPartials(match[1]!, seen);
  return seen;
}

/** The dashboard's words a template reads (`it.t.key`). */
function wordsRead(name: string): string[] {
  return [...templateText(name).matchAll(/\bit\.t\.([A-Za-z0-9]+)/g)]
    .map((match) => match[1]!)
    .filter((key) => Object.hasOwn(dictionaries.en, key));
}

describe('dashboard dictionaries (issue 38)', () => {
  test("a page's code reads its own words and the shared ones, not another page's", () => {
    assert.equal(wordsFor('payouts', 'en').payoutStatusPaid, dictionaries.en.payoutStatusPaid);
    assert.equal(wordsFor('payouts', 'en').amount, dictionaries.en.amount);
    // @ts-expect-error the home page's word is not the payouts page's
    assert.equal(wordsFor('payouts', 'en').chartSummary, undefined);
    // @ts-expect-error a page's own word is not one the shared parts may read
    assert.equal(sharedWords('en').chartSummary, undefined);
  });

  test("a page's templates read only its own words and the shared ones; the others only the shared ones", async () => {
    const shared = Object.keys(sharedWords('en'));
    const problems: string[] = [];
    const drawnByPage = new Set<string>();
    for (const page of readdirSync(PAGES)) {
      const module = (await import(/* @vite-ignore */ pathToFileURL(`${PAGES}/${page}/texts.ts`).href)) as Record<
        string,
        DictionarySet
      >;
      const own = Object.values(module).flatMap((set) => Object.keys(set.en));
      const allowed = new Set([...shared, ...own]);
      for (const template of templatesOf(page)) {
        for (const name of withPartials(template)) {
          drawnByPage.add(name);
          for (const key of wordsRead(name))
            if (!allowed.has(key)) problems.push(`${name}.eta (drawn by ${page}) reads "${key}"`);
        }
      }
    }
    const allowed = new Set(shared);
    for (const file of readdirSync(VIEWS)) {
      const name = file.replace(/\.eta$/, '');
      if (drawnByPage.has(name)) continue;
      for (const key of wordsRead(name)) if (!allowed.has(key)) problems.push(`${name}.eta (shared) reads "${key}"`);
    }
    assert.deepEqual(problems, []);
  });

  test('every word a template reads exists (eta would write "undefined")', () => {
    const missing = readdirSync(VIEWS).flatMap((file) =>
      [...templateText(file.replace(/\.eta$/, '')).matchAll(/\bit\.t\.([A-Za-z0-9]+)/g)]
        .map((match) => match[1]!)
        .filter((key) => !Object.hasOwn(dictionaries.en, key))
        .map((key) => `${file} reads "${key}"`),
    );
    assert.deepEqual(missing, []);
  });

  test('en, fr and ar: every key in every language, the same placeholders, and every key read', () => {
    assert.deepEqual(dictionaryProblems(dictionaries, readSources(dashboardSources())), []);
  });

  test('every error code has its words in every language, and no word is left for a code that is gone', () => {
    // The catalogue's codes are what reads these keys: the dashboard words any code a service answers.
    const codes = Object.keys(errorCatalogue).map((code) => `'${code}'`);
    assert.deepEqual(dictionaryProblems(errorTexts, [codes.join('\n')]), []);
    assert.deepEqual(Object.keys(errorTexts.ar).sort(), Object.keys(errorCatalogue).sort());
  });

  test('every event of the catalogue has its words in every language, and none is left for an event that is gone', () => {
    // Issue 54 item 15b: the payment's timeline words its events; the catalogue is what reads these keys.
    assert.deepEqual(dictionaryProblems(eventTexts, [EVENT_NAMES.map((name) => `'${name}'`).join('\n')]), []);
    assert.deepEqual(Object.keys(eventTexts.ar).sort(), [...EVENT_NAMES].sort());
    for (const lang of ['fr', 'ar'] as const)
      for (const [name, text] of Object.entries(eventTexts[lang]))
        assert.notEqual(text, eventTexts.en[name as keyof typeof eventTexts.en], `${lang} ${name}`);
  });

  test('the Arabic and French texts are not English left in place', () => {
    // Codes, units, brand-like words and punctuation that every language writes alike.
    const same = new Set(['TOF', 'TTE', 'CSV', ': ']);
    for (const lang of ['fr', 'ar'] as const) {
      const copied = Object.entries(dictionaries.en).filter(
        ([key, text]) => dictionaries[lang][key as keyof typeof dictionaries.en] === text && !same.has(text),
      );
      if (lang === 'ar') assert.deepEqual(copied, [], 'Arabic texts equal to the English ones');
    }
    for (const [code, text] of Object.entries(errorTexts.ar))
      assert.notEqual(text, errorTexts.en[code as keyof typeof errorTexts.en], code);
  });
});
