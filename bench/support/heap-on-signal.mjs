// Bench only, preloaded with --import into a server the bench starts: on SIGUSR2, a full garbage
// collection, then the process's memory as process.memoryUsage() reads it, written to
// HEAP_REPORT_FILE. What the heap holds live, which RSS (that V8 and the allocator return late)
// does not say.
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

process.on('SIGUSR2', () => {
  gc();
  fs.writeFileSync(process.env.HEAP_REPORT_FILE, JSON.stringify(process.memoryUsage()));
});
