import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { DASHBOARD_ROLES } from '../../src/db/schema.js';
import { PERMISSIONS, ROLE_PERMISSIONS } from '../../src/modules/team/permissions.js';

/** docs/dashboard.md shows the permission table; it must say what the code does (the vocabulary rule). */
test("docs/dashboard.md's role table is ROLE_PERMISSIONS", () => {
  const doc = readFileSync(new URL('../../docs/dashboard.md', import.meta.url), 'utf8');
  const block = /<!-- role-permissions:start -->([\s\S]*?)<!-- role-permissions:end -->/.exec(doc)?.[1];
  assert.ok(block, 'the table is between its markers');
  const rows = block
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  const [header, , ...body] = rows;
  assert.deepEqual(
    header!.slice(2),
    DASHBOARD_ROLES.map((role) => `\`${role}\``),
  );
  assert.deepEqual(
    body.map((cells) => cells[0]),
    PERMISSIONS.map((permission) => `\`${permission}\``),
  );
  for (const cells of body) {
    const permission = cells[0]!.replaceAll('`', '');
    DASHBOARD_ROLES.forEach((role, i) => {
      const shown = cells[2 + i] === 'yes';
      assert.equal(shown, (ROLE_PERMISSIONS[role] as readonly string[]).includes(permission), `${permission} ${role}`);
    });
  }
});
