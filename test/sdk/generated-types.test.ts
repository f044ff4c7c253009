import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import openapiTS, { astToString } from 'openapi-typescript';

test('the SDK types are generated from the committed openapi.json (run `npm run sdk:types`)', async () => {
  const generated = astToString(await openapiTS(new URL('../../openapi.json', import.meta.url)));
  const committed = readFileSync(new URL('../../packages/sdk/src/generated/openapi.ts', import.meta.url), 'utf8');
  assert.ok(
    committed.endsWith(generated),
    'packages/sdk/src/generated/openapi.ts is out of date: run `npm run sdk:types`',
  );
});
