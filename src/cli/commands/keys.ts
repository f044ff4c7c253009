import { integer, list, required, type Command, type CommandGroup } from '../command-line.js';

/** Suspends, revokes or rotates a key: the action is the last word of its path. */
const changeStatus: Command = ({ action, id }) => ({
  method: 'POST',
  path: `/keys/${encodeURIComponent(required(id, 'KEY_ID'))}/${action}`,
});

/**
 * Rolls a key: a successor now, the old key working `--expires-in` seconds more (0 by default, at
 * most 7 days; decision 084).
 */
const roll: Command = ({ id, values }) => {
  const expiresIn = integer(values['expires-in'], 'expires-in');
  return {
    method: 'POST',
    path: `/keys/${encodeURIComponent(required(id, 'KEY_ID'))}/roll`,
    ...(expiresIn !== undefined ? { body: { expiresIn } } : {}),
  };
};

/** API keys: created, suspended, revoked, rolled (rotated: at once), listed. */
const key: CommandGroup = {
  create: ({ values }) => ({
    method: 'POST',
    path: '/keys',
    body: {
      businessId: required(values.business, '--business'),
      kind: required(values.kind, '--kind'),
      environment: required(values.env, '--env'),
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.scopes !== undefined ? { scopes: list(values.scopes) } : {}),
      ...(values['ip-allow'] !== undefined ? { ipAllowlist: list(values['ip-allow']) } : {}),
    },
  }),
  suspend: changeStatus,
  revoke: changeStatus,
  rotate: changeStatus,
  roll,
  list: ({ values }) => ({
    method: 'GET',
    path: `/keys?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
  }),
};

export const keyCommands = { key };
