/**
 * Preloaded into every test-file process by scripts/run-tests.ts: on exit, appends the CPU time
 * the process used (`cpu<TAB>seconds<TAB>file`) to TEST_FILE_TIMES, so the run's summary can show
 * which files cost CPU, not only which took long (a file may mostly wait).
 */
import { appendFileSync } from 'node:fs';

const target = process.env.TEST_FILE_TIMES;
const file = process.argv[1];
if (target && file) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(target, `cpu\t${((user + system) / 1e6).toFixed(1)}\t${file}\n`);
  });
}
