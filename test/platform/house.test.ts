import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'vitest';

/**
 * The house keeps rooms a reader can hold in mind. A TypeScript source file of src/ or
 * of a package's src/ past this many lines is split by feature (docs/ARCHITECTURE.md, "The house").
 */
const MAX_LINES = 450;

const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCE_ROOTS = ['src', 'packages/sdk/src'];

/** Written by a tool, not read as code: `npm run sdk:types` writes it from openapi.json. */
const GENERATED = ['packages/sdk/src/generated/'];

function sourceFiles(directory: string): string[] {
  return readdirSync(path.join(ROOT, directory), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

function lineCount(file: string): number {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

const isGenerated = (file: string) => GENERATED.some((prefix) => file.startsWith(prefix));
const files = SOURCE_ROOTS.flatMap(sourceFiles).filter((file) => !isGenerated(file));

test(`no source file is over ${MAX_LINES} lines, generated files aside`, () => {
  const over = files
    .map((file) => ({ file, lines: lineCount(file) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  assert.deepEqual(over, []);
});

test('the generated files excepted exist', () => {
  for (const prefix of GENERATED) {
    assert.ok(sourceFiles(prefix.replace(/\/$/, '')).length > 0, `${prefix} holds no file: drop it from GENERATED`);
  }
});
