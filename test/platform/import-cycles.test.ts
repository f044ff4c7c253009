import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The modules of src/ a file imports, types included: a type-only cycle still ties two files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?'(\.[^']+)'/gm)) {
    found.push(path.resolve(path.dirname(file), match[1]!.replace(/\.js$/, '.ts')));
  }
  return found;
}

/**
 * Issue 34: the house reads top to bottom. A cycle between modules means neither can be read, or
 * loaded, without the other; each one found is printed as the chain of files that closes it.
 */
test('no import cycle in src/', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') {
        const chain = stack.slice(stack.indexOf(next)).concat(next);
        cycles.push(chain.map((step) => path.relative(SRC, step)).join(' -> '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  assert.deepEqual(cycles, []);
});

/**
 * Issue 48: the money core is read without the features that use it. Each folder of
 * src/modules/ listed here may import only the modules named beside it (and src/db, src/http,
 * src/lib): payments never reaches back into intents or orders, which own their lifecycles and
 * call it, nor into wallets, which fund themselves through it; the sandbox sits on both.
 */
const FOLDER_RULES: Record<string, readonly string[]> = {
  payments: [],
  wallets: ['payments'],
  sandbox: ['payments', 'wallets'],
};

test('the money core imports only what its folder rule allows', () => {
  const broken: string[] = [];
  for (const [folder, allowed] of Object.entries(FOLDER_RULES)) {
    for (const file of sourceFiles(path.join(SRC, 'modules', folder))) {
      for (const target of importsOf(file)) {
        const relative = path.relative(path.join(SRC, 'modules'), target);
        if (relative.startsWith('..')) continue;
        const module = relative.split(path.sep)[0]!;
        if (module !== folder && !allowed.includes(module)) {
          broken.push(`${path.relative(SRC, file)} imports ${path.relative(SRC, target)}`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});

/**
 * The house, floor by floor from the top (docs/ARCHITECTURE.md, "The house"). A room is a
 * folder of src/ (a module of src/modules/ on its own), or a file at src/'s root; a room imports
 * only rooms on its own floor or below. Every room has a floor: a new folder is placed here.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['app.ts', 'server.ts'],
  ['worker', 'cli', 'modules/index.ts', 'modules/event-payloads.ts'],
  ['bootstrap.ts'],
  ['modules/admin', 'modules/dashboard', 'modules/welcome', 'modules/walletapp'],
  ['modules/links', 'modules/requests'],
  ['modules/storefront', 'modules/checkout'],
  ['modules/orders'],
  ['modules/intents'],
  ['modules/payouts'],
  ['modules/products'],
  ['modules/sandbox'],
  ['modules/wallets'],
  ['modules/sellers'],
  ['modules/payments'],
  ['modules/webhooks'],
  ['modules/api-keys'],
  ['modules/events'],
  ['modules/businesses'],
  ['modules/audit'],
  ['modules/team'],
  ['http'],
  ['modules/keys'],
  ['db'],
  ['lib'],
  ['config.ts'],
];

/** The upward imports the house keeps, each explained in docs/ARCHITECTURE.md (at most 3). */
const ALLOWED_UPWARD_IMPORTS: readonly string[] = [];

function roomOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts.length === 1) return parts[0]!;
  if (parts[0] === 'modules') return `modules/${parts[1]}`;
  return parts[0]!;
}

function floorOf(room: string): number {
  return FLOORS.findIndex((floor) => floor.includes(room));
}

function upwardImports(): { upward: string[]; homeless: string[] } {
  const upward: string[] = [];
  const homeless = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    const from = roomOf(file);
    if (floorOf(from) < 0) homeless.add(from);
    for (const target of importsOf(file)) {
      const to = roomOf(target);
      if (floorOf(to) < 0) homeless.add(to);
      else if (floorOf(to) < floorOf(from)) upward.push(`${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`);
    }
  }
  return { upward: upward.map((edge) => edge.split(path.sep).join('/')).sort(), homeless: [...homeless].sort() };
}

test('imports run one way: each room imports its own floor or the floors below', () => {
  const { upward, homeless } = upwardImports();
  assert.deepEqual(homeless, [], 'rooms with no floor: place them in FLOORS');
  const kept = new Set(ALLOWED_UPWARD_IMPORTS);
  assert.deepEqual(
    upward.filter((edge) => !kept.has(edge)),
    [],
  );
  assert.deepEqual(
    [...kept].filter((edge) => !upward.includes(edge)),
    [],
    'an excepted upward import that is gone leaves its list',
  );
  assert.ok(ALLOWED_UPWARD_IMPORTS.length <= 3);
  const architecture = readFileSync(path.resolve(SRC, '../docs/ARCHITECTURE.md'), 'utf8');
  for (const edge of ALLOWED_UPWARD_IMPORTS) {
    const [from, to] = edge.split(' -> ') as [string, string];
    assert.ok(architecture.includes(`\`${from}\` → \`${to}\``), `docs/ARCHITECTURE.md explains ${edge}`);
  }
});
