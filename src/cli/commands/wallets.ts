import { integer, required, type CommandGroup } from '../command-line.js';

/** Wallets (made, credited, shown) and the ledger's check: the money an operator moves and verifies. */
const wallet: CommandGroup = {
  create: ({ values }) => ({
    method: 'POST',
    path: '/wallets',
    body: {
      phone: required(values.phone, '--phone'),
      pin: required(values.pin, '--pin'),
      balance: integer(values.balance, 'balance') ?? 0,
      environment: required(values.env, '--env'),
      ...(values.locked ? { locked: true } : {}),
    },
  }),
  credit: ({ values }) => ({
    method: 'POST',
    path: '/wallets/credit',
    body: {
      phone: required(values.phone, '--phone'),
      amount: integer(required(values.amount, '--amount'), 'amount'),
      environment: required(values.env, '--env'),
    },
  }),
  show: ({ values }) => ({
    method: 'GET',
    path: `/wallets?phone=${encodeURIComponent(required(values.phone, '--phone'))}&environment=${encodeURIComponent(required(values.env, '--env'))}`,
  }),
};

const ledger: CommandGroup = {
  check: () => ({ method: 'GET', path: '/ledger/check', succeeded: (data) => (data as { ok: boolean }).ok }),
};

export const walletCommands = { wallet, ledger };
