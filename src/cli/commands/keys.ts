import { list, required, type Command, type CommandGroup } from '../command-line.js';

/** Suspends, revokes or rotates a key: the action is the last word of its path. */
const changeStatus: Command = ({ action, id }) => ({
  method: 'POST',
  path: `/keys/${encodeURIComponent(required(id, 'KEY_ID'))}/${action}`,
});

/** API keys: created, suspended, revoked, rotated, listed. */
const key: CommandGroup = {
  create: ({ values }) => ({
    method: 'POST',
    path: '/keys',
    body: {
      businessId: required(values.business, '--business'),
      kind: required(values.kind, '--kind'),
      environment: required(values.env, '--env'),
      ...(values.scopes !== undefined ? { scopes: list(values.scopes) } : {}),
      ...(values['ip-allow'] !== undefined ? { ipAllowlist: list(values['ip-allow']) } : {}),
    },
  }),
  suspend: changeStatus,
  revoke: changeStatus,
  rotate: changeStatus,
  list: ({ values }) => ({
    method: 'GET',
    path: `/keys?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
  }),
};

export const keyCommands = { key };
