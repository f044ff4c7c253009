/**
 * Builds the package: ESM into dist/esm (with the CLI), CommonJS into dist/cjs (the library only),
 * declarations beside each. Run by `npm run build` here, by `prepack`, and by the repository's
 * build. Plain JavaScript: it runs before anything is compiled.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

// A clean output: a module deleted from src/ must not live on in dist/.
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
// Side by side: each pass spends most of its time alone on the generated types.
const compile = (config) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, '-p', path.join(root, config)], { stdio: 'inherit' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
const failed = (await Promise.all(['tsconfig.json', 'tsconfig.cjs.json'].map(compile))).find((code) => code !== 0);
if (failed !== undefined) process.exit(failed);
writeFileSync(path.join(root, 'dist', 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
