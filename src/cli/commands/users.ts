import { required, type CommandGroup } from '../command-line.js';

/** Dashboard users of a business. */
const user: CommandGroup = (action, id, values) => {
  switch (action) {
    case 'create':
      return {
        method: 'POST',
        path: '/users',
        body: {
          businessId: required(values.business, '--business'),
          email: required(values.email, '--email'),
          password: required(values.password, '--password'),
          ...(values.role !== undefined ? { role: values.role } : {}),
        },
      };
    case 'list':
      return {
        method: 'GET',
        path: `/users?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
      };
    case 'disable':
      return { method: 'POST', path: `/users/${encodeURIComponent(required(id, 'USER_ID'))}/disable` };
    case 'reset-password':
      return {
        method: 'POST',
        path: `/users/${encodeURIComponent(required(id, 'USER_ID'))}/reset-password`,
        body: { password: required(values.password, '--password') },
      };
    default:
      return undefined;
  }
};

export const userCommands = { user };
