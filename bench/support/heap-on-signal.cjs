// Bench only, preloaded with --require into a server the bench starts: on SIGUSR2, a full garbage
// collection, then the process's memory as process.memoryUsage() reads it, written to
// HEAP_REPORT_FILE. What the heap holds live, which RSS (that V8 and the allocator return late)
// does not say.
const fs = require('node:fs');
const v8 = require('node:v8');
const vm = require('node:vm');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

process.on('SIGUSR2', () => {
  gc();
  fs.writeFileSync(process.env.HEAP_REPORT_FILE, JSON.stringify(process.memoryUsage()));
});
