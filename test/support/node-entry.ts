import path from 'node:path';

/**
 * The node arguments that run one of the repository's TypeScript programs (`src/server.ts`,
 * `src/cli/admin.ts`, ...) in a child process: its compiled copy when `npm test` compiled the tree
 * for the run (test/support/global-setup.ts sets TEST_BUILD_DIR), else the source through tsx, as when a
 * file is run on its own. Starting the compiled copy saves each child the TypeScript loader;
 * `--liftoff-only` saves it V8's optimizing compile of PGlite's WebAssembly, which in a short-lived
 * child costs more CPU than it saves (as in the test processes themselves).
 */
export function nodeEntry(tsPath: string): string[] {
  const buildDir = process.env.TEST_BUILD_DIR;
  if (!buildDir) return ['--import', 'tsx', tsPath];
  return ['--liftoff-only', '--enable-source-maps', path.join(buildDir, tsPath.replace(/\.ts$/, '.js'))];
}
