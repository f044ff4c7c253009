/**
 * `npm run build` (also run by `npm install` through `prepare`): compiles src/ to dist/ with tsc
 * and copies every file of src/ that is not TypeScript (SQL migrations, templates, assets)
 * beside its compiled code, so dist/ runs on plain Node with no loader; then the SDK workspace.
 * Then the server's entry is bundled into one file (bundleServer below), and the database image
 * (src/db/image.ts): the migrated embedded database a first start unpacks instead of running
 * initdb and every migration; kept from the last build when still current.
 * `node scripts/build.mjs server` builds the server only (the quick-start test: the SDK's tests may
 * be importing packages/sdk/dist meanwhile).
 * Plain JavaScript on purpose: it must run before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  // A production install (`npm ci --omit=dev`) of a tree built beforehand: keep what is built.
  if (existsSync(path.join(dist, 'server.js'))) {
    process.stdout.write('build: TypeScript is not installed; keeping the existing dist/\n');
    process.exit(0);
  }
  process.stderr.write(
    'build: TypeScript is not installed. Run `npm install` (with dev dependencies), or build before `npm prune --omit=dev`.\n',
  );
  process.exit(1);
}

// The database image, kept apart: remade only when its migrations changed (its builder checks).
const IMAGE_DIR = 'pglite-image';

// A clean output: a module deleted from src/ must not live on in dist/.
if (existsSync(dist)) {
  for (const entry of readdirSync(dist))
    if (entry !== IMAGE_DIR) rmSync(path.join(dist, entry), { recursive: true, force: true });
}
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

let copied = 0;
function copyAssets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(from);
    else if (!entry.name.endsWith('.ts')) {
      const to = path.join(dist, path.relative(src, from));
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(from, to);
      copied += 1;
    }
  }
}
copyAssets(src);
process.stdout.write(`build: compiled src/ to dist/ and copied ${copied} other file(s)\n`);

/**
 * Packages the bundle leaves to Node: each finds files of its own beside its code (PGlite's
 * WebAssembly, Swagger UI's pages, pino's worker, ...) through `__dirname`, which a bundle cannot
 * give each of them. The build fails if another such package comes in.
 */
const UNBUNDLED = ['@electric-sql/pglite', '@fastify/swagger', '@fastify/swagger-ui', 'ioredis', 'pg-native', 'pino'];

/**
 * dist/server.js, rewritten as one file with its modules and packages (esbuild). Loading some
 * 1,900 modules one by one was most of a restart (1.0 of 2.0 s; 0.25 s bundled). The compiled
 * modules stay in dist/ beside it: each module's `import.meta.url` is rewritten to its own file
 * there, so templates, assets and migrations are found where they are; the CLIs run them as they are.
 */
async function bundleServer() {
  const { build } = await import('esbuild');
  const usingDirname = new Set();
  const ownUrls = {
    name: 'own-module-urls',
    setup(bundler) {
      bundler.onLoad({ filter: /\.js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!args.path.startsWith(dist + path.sep)) {
          if (/\b__(dirname|filename)\b/.test(text)) usingDirname.add(path.relative(root, args.path));
          return undefined;
        }
        if (!text.includes('import.meta.url')) return undefined;
        const own = `./${path.relative(dist, args.path).split(path.sep).join('/')}`;
        const contents = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`);
        return { contents, loader: 'js' };
      });
    },
  };
  const entry = path.join(dist, 'server.js');
  await build({
    entryPoints: [entry],
    outfile: entry,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    external: UNBUNDLED,
    // The CommonJS packages inside call require() for Node's own modules.
    banner: {
      js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
    },
    plugins: [ownUrls],
    logLevel: 'warning',
  });
  if (usingDirname.size > 0) {
    process.stderr.write(
      `build: these bundled files use __dirname or __filename; add their packages to UNBUNDLED in scripts/build.mjs:\n  ${[...usingDirname].join('\n  ')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write('build: bundled the server into dist/server.js\n');
}
await bundleServer();

// Never fails the build (nor `npm install`): without an image, a first start is slower, not different.
const image = spawnSync(process.execPath, [path.join(dist, 'db', 'build-image-cli.js')], {
  stdio: ['ignore', 'inherit', 'pipe'],
  encoding: 'utf8',
});
if (image.status !== 0) {
  rmSync(path.join(dist, IMAGE_DIR), { recursive: true, force: true });
  // The error's own line, not a crash's source excerpt.
  const lines = (image.stderr || image.error?.message || '').trim().split('\n');
  const why = lines.find((line) => /^\w*Error\b/.test(line.trim())) ?? lines.at(-1);
  process.stdout.write(
    `build: could not make the database image; first starts will create the database the slow way\n${why}\n`,
  );
}

if (process.argv[2] === 'server') process.exit(0);

// The SDK workspace (packages/sdk): its own build (ESM and CommonJS, with declarations).
const sdkCompiled = spawnSync(process.execPath, [path.join(root, 'packages', 'sdk', 'scripts', 'build.mjs')], {
  stdio: 'inherit',
});
if (sdkCompiled.status !== 0) process.exit(sdkCompiled.status ?? 1);
process.stdout.write('build: compiled packages/sdk/src/ to packages/sdk/dist/ (esm and cjs)\n');
