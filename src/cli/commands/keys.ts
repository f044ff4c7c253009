import { list, required, type CommandGroup } from '../command-line.js';

/** API keys: created, suspended, revoked, rotated, listed. */
const key: CommandGroup = (action, id, values) => {
  switch (action) {
    case 'create':
      return {
        method: 'POST',
        path: '/keys',
        body: {
          businessId: required(values.business, '--business'),
          kind: required(values.kind, '--kind'),
          environment: required(values.env, '--env'),
          ...(values.scopes !== undefined ? { scopes: list(values.scopes) } : {}),
          ...(values['ip-allow'] !== undefined ? { ipAllowlist: list(values['ip-allow']) } : {}),
        },
      };
    case 'suspend':
    case 'revoke':
    case 'rotate':
      return { method: 'POST', path: `/keys/${encodeURIComponent(required(id, 'KEY_ID'))}/${action}` };
    case 'list':
      return {
        method: 'GET',
        path: `/keys?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
      };
    default:
      return undefined;
  }
};

export const keyCommands = { key };
