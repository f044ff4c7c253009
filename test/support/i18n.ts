import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LANGS, placeholdersOf, type Dictionary, type DictionarySet } from '../../src/lib/i18n.js';

/**
 * Checks for any page's dictionary set. A new set joins test/i18n/dictionaries.test.ts with its
 * dictionaries and the source files that read its keys; its rendered pages go through
 * `englishLeaks` for every state.
 */

export interface DictionarySetUnderTest {
  name: string;
  dictionaries: DictionarySet;
  /** Repository paths of the code that reads the keys (not the dictionary file itself). */
  sources: string[];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A key is read when the code names it: `t.key`, `t['key']`, or `'key'` in a table of keys. */
function isRead(key: string, sourceText: string): boolean {
  const name = escapeRegExp(key);
  return new RegExp(`\\.${name}\\b|\\[\\s*['"\`]${name}['"\`]\\s*\\]|['"\`]${name}['"\`]`).test(sourceText);
}

/**
 * Everything wrong with a dictionary set, as readable lines (an empty list when complete): a key
 * missing from a language or unknown to English, an empty text, placeholders that differ from
 * English, a key no source reads.
 */
export function dictionaryProblems(set: DictionarySet, sourceTexts: readonly string[]): string[] {
  const problems: string[] = [];
  const reference = set.en;
  const keys = Object.keys(reference);
  for (const lang of LANGS) {
    const dictionary: Dictionary = set[lang];
    for (const key of keys) {
      const value = dictionary[key];
      if (typeof value !== 'string') {
        problems.push(`${lang}: missing key "${key}"`);
        continue;
      }
      if (value.trim() === '') problems.push(`${lang}: empty text for "${key}"`);
      const expected = [...new Set(placeholdersOf(reference[key]!))].sort();
      const actual = [...new Set(placeholdersOf(value))].sort();
      if (expected.join() !== actual.join())
        problems.push(
          `${lang}: "${key}" has placeholders {${actual.join('}{')}}, English has {${expected.join('}{')}}`,
        );
    }
    for (const key of Object.keys(dictionary))
      if (!(key in reference)) problems.push(`${lang}: key "${key}" is not in the English dictionary`);
  }
  const sources = sourceTexts.join('\n');
  for (const key of keys) if (!isRead(key, sources)) problems.push(`unused key "${key}": no source reads it`);
  return problems;
}

/** The files of a set, read from the repository (paths relative to its root). */
export function readSources(paths: readonly string[]): string[] {
  return paths.map((file) => readFileSync(path.resolve(file), 'utf8'));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => ENTITIES[name]!);
}

function stringsIn(value: unknown, into: string[]): void {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, into);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, into);
}

/** The data a customer page gives its script (`data-page` on <body>, JSON), or undefined. */
export function pageDataOf(html: string): Record<string, any> | undefined {
  const attribute = /<body[^>]*\sdata-page="([^"]*)"/.exec(html)?.[1];
  return attribute === undefined ? undefined : JSON.parse(decodeEntities(attribute));
}

/**
 * What a reader can see of a page: its text, the attributes read aloud or shown (title,
 * placeholder, aria-label, alt, value), and every string of its script's data (`data-page`, or a
 * JSON data block: the texts its script shows later). Script code and styles are not text.
 */
export function visibleTexts(html: string): string[] {
  const texts: string[] = [];
  for (const match of html.matchAll(/<script type="application\/json"[^>]*>([\s\S]*?)<\/script>/g))
    stringsIn(JSON.parse(match[1]!), texts);
  const data = pageDataOf(html);
  // The formats are a locale and a unit, not text.
  if (data) stringsIn({ ...data, format: undefined }, texts);
  const markup = html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<script\b[\s\S]*?<\/script>/g, ' ')
    .replace(/<style\b[\s\S]*?<\/style>/g, ' ');
  for (const match of markup.matchAll(/\s(?:title|placeholder|aria-label|alt|value)="([^"]*)"/g))
    texts.push(decodeEntities(match[1]!));
  for (const piece of markup.split(/<[^>]*>/)) {
    const text = decodeEntities(piece).trim();
    if (text) texts.push(text);
  }
  // Inline elements (<bdi>) split sentences: also look at each block's text as one line.
  texts.push(decodeEntities(markup.replace(/<[^>]*>/g, '')).replace(/\s+/g, ' '));
  return texts;
}

/** An English text as a pattern: its words as written, any value in place of a placeholder, whole words only. */
function englishPattern(text: string): RegExp {
  const parts = text.split(/\{[a-zA-Z][a-zA-Z0-9]*\}/).map(escapeRegExp);
  return new RegExp(`(?<![\\p{L}\\p{N}])${parts.join('.*?')}(?![\\p{L}\\p{N}])`, 'u');
}

/** The English texts a page shows although it speaks another language (an empty list when none). */
export function englishLeaks(html: string, english: Dictionary): string[] {
  const texts = visibleTexts(html);
  return Object.entries(english)
    .filter(([, value]) => texts.some((text) => englishPattern(value).test(text)))
    .map(([key, value]) => `${key}: "${value}"`);
}

/**
 * The English texts (longer than `minLength`, not allowed) found among texts a browser shows:
 * for a page checked in a real browser, where `visibleTexts` of its HTML cannot see what its
 * script drew. `allow` lists English texts a page may show in any language (brand names, units).
 */
export function englishAmong(
  texts: readonly string[],
  english: Dictionary,
  options: { minLength?: number; allow?: readonly string[] } = {},
): string[] {
  const { minLength = 3, allow = [] } = options;
  return Object.entries(english)
    .filter(([, value]) => value.replace(/\{[a-zA-Z][a-zA-Z0-9]*\}/g, '').trim().length > minLength)
    .filter(([, value]) => !allow.includes(value))
    .filter(([, value]) => texts.some((text) => englishPattern(value).test(text)))
    .map(([key, value]) => `${key}: "${value}"`);
}
