import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { OPERATOR_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope } from '../../http/schemas.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { checkLedger } from '../payments/ledger.js';
import { checkPinFormat, createWallet, creditWallet, findWallet, hashPin, walletView } from '../wallets/service.js';

const Environment = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const Phone = Type.String({ pattern: E164_PATTERN, description: 'E.164' });
const Centimes = Type.Integer({ minimum: 0, maximum: 100_000_000_000 });
const Wallet = Type.Object({
  id: Type.String(),
  phone: Type.String(),
  environment: Environment,
  balance: Type.Integer(),
  status: Type.Union([Type.Literal('active'), Type.Literal('locked')]),
  lockedUntil: Type.Union([Type.String(), Type.Null()]),
});

/** Operator routes for wallets and the ledger (mounted inside the admin API, behind its token). */
export const walletAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;

  app.post(
    '/wallets',
    {
      config: { write: { ...OPERATOR_WRITE, secretFields: ['pin'] } },
      schema: {
        body: Type.Object(
          {
            phone: Phone,
            pin: Type.String({ pattern: '^[0-9]{4,6}$', description: '4 to 6 digits' }),
            balance: Type.Optional(Centimes),
            environment: Environment,
            locked: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Wallet) },
      },
    },
    async (request, reply) => {
      checkPinFormat(request.body.pin);
      const pinHash = await hashPin(request.body.pin);
      return write(request, reply, 201, async (trx) =>
        walletView(trx, await createWallet(trx, { ...request.body, balance: request.body.balance ?? 0 }, pinHash)),
      );
    },
  );

  app.post(
    '/wallets/credit',
    {
      schema: {
        body: Type.Object(
          { phone: Phone, environment: Environment, amount: Type.Integer({ minimum: 1, maximum: 100_000_000_000 }) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Wallet) },
      },
    },
    async (request, reply) => write(request, reply, 200, (trx) => creditWallet(trx, request.body)),
  );

  app.get(
    '/wallets',
    {
      schema: {
        querystring: Type.Object({ phone: Phone, environment: Environment }, { additionalProperties: false }),
        response: { 200: Envelope(Wallet) },
      },
    },
    async (request) => {
      const wallet = await findWallet(db, request.query.environment, request.query.phone);
      if (!wallet) throw new ApiError('WALLET_NOT_FOUND');
      return { success: true as const, data: await walletView(db, wallet) };
    },
  );

  app.get(
    '/ledger/check',
    {
      schema: {
        response: {
          200: Envelope(
            Type.Object({
              ok: Type.Boolean(),
              accounts: Type.Integer(),
              postings: Type.Integer(),
              problems: Type.Array(Type.String()),
            }),
          ),
        },
      },
    },
    async () => ({ success: true as const, data: await checkLedger(db) }),
  );
};
