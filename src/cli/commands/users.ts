import { required, type CommandGroup } from '../command-line.js';

/** Dashboard users of a business. */
const user: CommandGroup = {
  create: ({ values }) => ({
    method: 'POST',
    path: '/users',
    body: {
      businessId: required(values.business, '--business'),
      email: required(values.email, '--email'),
      password: required(values.password, '--password'),
      ...(values.role !== undefined ? { role: values.role } : {}),
    },
  }),
  list: ({ values }) => ({
    method: 'GET',
    path: `/users?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
  }),
  disable: ({ id }) => ({ method: 'POST', path: `/users/${encodeURIComponent(required(id, 'USER_ID'))}/disable` }),
  'reset-password': ({ id, values }) => ({
    method: 'POST',
    path: `/users/${encodeURIComponent(required(id, 'USER_ID'))}/reset-password`,
    body: { password: required(values.password, '--password') },
  }),
};

export const userCommands = { user };
