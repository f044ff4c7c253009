import { integer, required, type CommandGroup } from '../command-line.js';

/** Wallets (made, credited, shown) and the ledger's check: the money an operator moves and verifies. */
const wallet: CommandGroup = (action, id, values) => {
  switch (action) {
    case 'create':
      return {
        method: 'POST',
        path: '/wallets',
        body: {
          phone: required(values.phone, '--phone'),
          pin: required(values.pin, '--pin'),
          balance: integer(values.balance, 'balance') ?? 0,
          environment: required(values.env, '--env'),
          ...(values.locked ? { locked: true } : {}),
        },
      };
    case 'credit':
      return {
        method: 'POST',
        path: '/wallets/credit',
        body: {
          phone: required(values.phone, '--phone'),
          amount: integer(required(values.amount, '--amount'), 'amount'),
          environment: required(values.env, '--env'),
        },
      };
    case 'show':
      return {
        method: 'GET',
        path: `/wallets?phone=${encodeURIComponent(required(values.phone, '--phone'))}&environment=${encodeURIComponent(required(values.env, '--env'))}`,
      };
    default:
      return undefined;
  }
};

const ledger: CommandGroup = (action) => {
  switch (action) {
    case 'check':
      return { method: 'GET', path: '/ledger/check', succeeded: (data) => (data as { ok: boolean }).ok };
    default:
      return undefined;
  }
};

export const walletCommands = { wallet, ledger };
