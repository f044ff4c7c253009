/**
 * A node:test reporter for scripts/run-tests.ts: appends to the file named by TEST_FILE_TIMES, as
 * each test process finishes, `wall<TAB>seconds<TAB>file` (the runner reports a process as a
 * top-level test named by its path, lasting as long as the process), and for each test file run in
 * a batch process (scripts/test-batch.mjs: a top-level suite named by the file's source path)
 * `suite<TAB>seconds<TAB>name`.
 * Written synchronously, line by line, because `--test-force-exit` ends the run before a
 * reporter's final output would be flushed.
 *
 * Plain JavaScript: node loads reporters before any TypeScript loader would apply.
 */
import { appendFileSync } from 'node:fs';

/** @param {AsyncIterable<{ type: string, data: { name?: string, file?: string, nesting?: number, details?: { duration_ms?: number } } }>} source */
export default async function* fileTimes(source) {
  const target = process.env.TEST_FILE_TIMES;
  for await (const event of source) {
    const { name, file, nesting, details } = event.data;
    if (!target || event.type !== 'test:complete' || file === undefined || nesting !== 0) continue;
    const seconds = ((details?.duration_ms ?? 0) / 1000).toFixed(1);
    // In a batch, each file is a top-level suite named by its source path (test-batch.mjs).
    appendFileSync(target, name === file ? `wall\t${seconds}\t${file}\n` : `suite\t${seconds}\t${name}\n`);
  }
  yield '';
}
