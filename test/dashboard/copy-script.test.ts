import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'vitest';

const VIEWS = path.resolve('src/modules/dashboard/views');
const read = (name: string) => readFileSync(path.join(VIEWS, name), 'utf8');

/**
 * Copy and Share (views/copy.eta) work through one script, assets/copy.js: the layout loads it once
 * when the page asks (`copies: true` in its layout() call), so a page with two Copy buttons does not
 * load it twice (the partial used to carry its own <script>, and the script marked what it had wired).
 */
describe("Copy's script: loaded once, by the layout", () => {
  test('the partial has no script; every page that includes it asks the layout for it', () => {
    assert.doesNotMatch(read('copy.eta'), /<script/);
    assert.doesNotMatch(readFileSync(path.resolve('src/modules/dashboard/assets/copy.js'), 'utf8'), /-ready/);
    const pages = readdirSync(VIEWS).filter((name) => name.endsWith('.eta') && /include\('copy'/.test(read(name)));
    assert.ok(pages.length >= 6, pages.join(', '));
    for (const name of pages) assert.match(read(name), /^<% layout\('layout', \{[^}]*copies: true \}\) %>/, name);
  });
});
