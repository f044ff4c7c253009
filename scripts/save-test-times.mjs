/**
 * `npm run test:times`: writes scripts/test-file-times.json, the wall time of each test file that
 * `npm test` uses to split the files into processes on a checkout with no times of its own (a
 * fresh clone), from this checkout's last runs. Run it after a whole `npm test` on PGlite.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const local = JSON.parse(readFileSync('node_modules/.cache/devapi-tests/file-times.json', 'utf8'));
const known = Object.fromEntries(
  Object.entries(local)
    .filter(([file]) => existsSync(file))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, seconds]) => [file, Math.round(seconds * 10) / 10]),
);
writeFileSync('scripts/test-file-times.json', `${JSON.stringify(known, null, 2)}\n`);
process.stdout.write(`scripts/test-file-times.json: ${Object.keys(known).length} files\n`);
