/**
 * A node:test reporter for scripts/run-tests.ts: appends `wall<TAB>seconds<TAB>file` to the file named by
 * TEST_FILE_TIMES as each test file finishes (the runner reports a file as a top-level test named
 * by its path, lasting as long as the file's process). Written synchronously, line by line, because
 * `--test-force-exit` ends the run before a reporter's final output would be flushed.
 *
 * Plain JavaScript: node loads reporters before the `--import tsx` hook applies.
 */
import { appendFileSync } from 'node:fs';

/** @param {AsyncIterable<{ type: string, data: { name?: string, file?: string, details?: { duration_ms?: number } } }>} source */
export default async function* fileTimes(source) {
  const target = process.env.TEST_FILE_TIMES;
  for await (const event of source) {
    const { name, file, details } = event.data;
    if (target && event.type === 'test:complete' && file !== undefined && name === file)
      appendFileSync(target, `wall\t${((details?.duration_ms ?? 0) / 1000).toFixed(1)}\t${file}\n`);
  }
  yield '';
}
