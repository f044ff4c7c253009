import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  getBusiness,
  getBusinessContact,
  getShop,
  renameBusiness,
  requestLiveAccess,
  setBusinessContact,
  setShopName,
} from '../../../businesses/service.js';
import { walletPhone } from '../../../../lib/phone.js';
import { payBaseUrl } from '../../../intents/routes.js';
import { getFeePlan } from '../../../payments/fee-plans.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../../http/errors.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { fieldChecks, formState, isAboutForm, refusalOf, type FormFields } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import { passwordProblem } from '../../password.js';
import { passwordAttemptAllowed, RETRY_AFTER_SECONDS } from '../../password-attempts.js';
import { CONTACT_AUDIT_FIELDS, recordUpdate } from '../../../audit/acts.js';
import { actorOf, recordAct, recordAudit } from '../../../audit/record.js';
import { changeOwnPassword, isCurrentPassword, newPasswordHash } from '../../users.js';
import { dashboardWrite, Token } from '../../write.js';
import type { ContactTyped } from './view.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { pageQuery } from '../../page-query.js';

const SETTINGS = `${DASHBOARD}/settings`;

const FlashQuery = pageQuery({
  notice: Type.Optional(Type.String({ maxLength: 20 })),
  error: Type.Optional(Type.String({ maxLength: 64 })),
});
const TokenForm = Type.Object(Token, { additionalProperties: false });
// The shop's name: empty, the business's own (absent, as a form from before the field, unchanged).
const NameForm = Type.Object(
  { ...Token, name: Type.String({ maxLength: 400 }), shopName: Type.Optional(Type.String({ maxLength: 400 })) },
  { additionalProperties: false },
);
/** What the business form changes, by the audit entry's names. */
const NAME_FIELDS = { name: 'name', shopName: 'shopName' } as const;
const PasswordForm = Type.Object(
  {
    ...Token,
    current: Type.String({ maxLength: 1000 }),
    password: Type.String({ maxLength: 1000 }),
    again: Type.String({ maxLength: 1000 }),
  },
  { additionalProperties: false },
);

const ContactForm = Type.Object(
  {
    ...Token,
    phone: Type.String({ maxLength: 40 }),
    email: Type.String({ maxLength: 400 }),
    pickupAddress: Type.String({ maxLength: 1000 }),
    delivers: Type.Optional(Type.Literal('yes')),
  },
  { additionalProperties: false },
);
/** The shop-contact form as typed: drawn back as it was when refused. */
const PICKUP_ADDRESS_MAX = 300;
// What an address needs to be one; the mail itself is the only real check.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The shop-contact form's fields its refusals name. */
const CONTACT_FIELDS: FormFields<'settings'> = {
  fields: [
    { pattern: /^phone$/, text: 'fieldContactPhone', as: 'contact.phone' },
    { pattern: /^email$/, text: 'fieldContactEmail', as: 'contact.email' },
    { pattern: /^pickupAddress$/, text: 'fieldPickupAddress', as: 'contact.pickupAddress' },
  ],
};

/** The own-password form's fields its refusals name. */
const PASSWORD_FIELDS: FormFields<'settings'> = {
  fields: [
    { pattern: /^current$/, text: 'fieldPasswordWrong' },
    { pattern: /^password$/, text: 'fieldPasswordLength' },
    { pattern: /^again$/, text: 'fieldPasswordsDiffer' },
  ],
  codes: { RATE_LIMITED: { field: 'current', text: 'fieldPasswordAttempts' } },
};

/**
 * Settings: the business's name, shop contact and live access (settings.manage changes them), the
 * member's own password, the fee plan (read only). The team is on its own page (pages/team).
 */
export const settingsPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const manage = { dashboard: 'settings.manage', write: FORM_WRITE } as const;

  /** The settings page; the password form's refusal drawn beside its fields (nothing typed is drawn back). */
  const drawSettings = async (
    request: FastifyRequest,
    reply: FastifyReply,
    refusal?: { error: ApiError; form: FormFields<'settings'> },
    typed: { contact?: ContactTyped } = {},
  ) => {
    const session = requireSession(request);
    const [feePlan, business, contact, shop] = await Promise.all([
      getFeePlan(db, session.businessId),
      getBusiness(db, session.businessId),
      getBusinessContact(db, session.businessId),
      getShop(db, session.businessId, session.environment),
    ]);
    const t = wordsFor('settings', langOf(request));
    return sendPage(
      request,
      reply,
      'settings',
      {
        feePlan,
        business,
        ownShopName: shop?.ownName ?? null,
        storefront: shop ? { name: shop.name, url: `${payBaseUrl(request)}/s/${shop.id}` } : null,
        contact: typed.contact ?? {
          phone: contact.phone ?? '',
          email: contact.email ?? '',
          pickupAddress: contact.pickupAddress ?? '',
          delivers: contact.delivers,
        },
        ...formState(refusal ? refusalOf(refusal.error, t, refusal.form) : undefined),
      },
      refusal?.error.status,
    );
  };

  app.get(
    at(SETTINGS),
    { config: { dashboard: 'session' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => drawSettings(request, reply),
  );

  // Any signed-in user changes their own password (a viewer too); the three passwords are never
  // kept beside the form's key.
  app.post(
    at(`${SETTINGS}/password`),
    {
      config: {
        dashboard: 'session',
        write: { ...FORM_WRITE, secretFields: [...FORM_WRITE.secretFields, 'current', 'password', 'again'] },
      },
      schema: { hide: true, body: PasswordForm },
    },
    async (request, reply) => {
      const session = requireSession(request);
      const { current, password, again } = request.body;
      // A guess at the current password spends sign-in's budget (decision 072), before its check.
      if (!(await passwordAttemptAllowed(request, session.email))) {
        reply.header('Retry-After', RETRY_AFTER_SECONDS);
        return drawSettings(request, reply, { error: new ApiError('RATE_LIMITED'), form: PASSWORD_FIELDS });
      }
      // Checked and hashed before the write's transaction (each hash is slow); refused inside it.
      const checks = fieldChecks();
      if (!(await isCurrentPassword(db, session.userId, current)))
        checks.refuse('current', 'is not the current password');
      const problem = passwordProblem(password);
      if (problem) checks.refuse('password', problem);
      else if (again !== password) checks.refuse('again', 'is not the same as password');
      const passwordHash = problem ? '' : await newPasswordHash(password, config.dashboard.passwordCost);
      return dashboardWrite(
        request,
        reply,
        SETTINGS,
        async (trx) => {
          checks.finish();
          await changeOwnPassword(trx, session.userId, passwordHash, session.tokenHash);
          await recordAudit(trx, {
            businessId: session.businessId,
            environment: null,
            action: 'user.password_changed',
            actor: actorOf(request),
            target: { kind: 'dashboard_user', id: session.userId },
          });
          return { redirect: SETTINGS };
        },
        (error) =>
          isAboutForm(error, PASSWORD_FIELDS)
            ? drawSettings(request, reply, { error, form: PASSWORD_FIELDS })
            : undefined,
      );
    },
  );

  app.post(
    at(`${SETTINGS}/business`),
    { config: manage, schema: { hide: true, body: NameForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, SETTINGS, async (trx, session) => {
        const { name, shopName } = request.body;
        const before = {
          name: (await getBusiness(trx, session.businessId)).name,
          shopName: (await getShop(trx, session.businessId, session.environment))?.ownName ?? null,
        };
        await renameBusiness(trx, session.businessId, name);
        if (shopName !== undefined) await setShopName(trx, session.businessId, shopName.trim() || null);
        const after = {
          name: name.trim(),
          shopName: shopName === undefined ? before.shopName : shopName.trim() || null,
        };
        const act = { action: 'settings.updated', target: { kind: 'business', id: session.businessId } } as const;
        await recordUpdate(trx, request, act, { before, after }, NAME_FIELDS);
        return { redirect: SETTINGS };
      }),
  );

  // What the shop's customers read on their order pages; an empty field clears it.
  app.post(
    at(`${SETTINGS}/contact`),
    { config: manage, schema: { hide: true, body: ContactForm } },
    async (request, reply) => {
      const typed: ContactTyped = {
        phone: request.body.phone.trim(),
        email: request.body.email.trim(),
        pickupAddress: request.body.pickupAddress.trim(),
        delivers: request.body.delivers === 'yes',
      };
      const checks = fieldChecks();
      const phone = typed.phone === '' ? null : (walletPhone(typed.phone) ?? null);
      if (typed.phone !== '' && phone === null) checks.refuse('phone', 'is not a phone number');
      if (typed.email !== '' && (typed.email.length > 254 || !EMAIL_SHAPE.test(typed.email)))
        checks.refuse('email', 'is not an email address');
      if (typed.pickupAddress.length > PICKUP_ADDRESS_MAX)
        checks.refuse('pickupAddress', `is longer than ${PICKUP_ADDRESS_MAX} characters`);
      return dashboardWrite(
        request,
        reply,
        SETTINGS,
        async (trx, session) => {
          checks.finish();
          const before = await getBusinessContact(trx, session.businessId);
          const after = {
            phone,
            email: typed.email || null,
            pickupAddress: typed.pickupAddress || null,
            delivers: typed.delivers,
          };
          await setBusinessContact(trx, session.businessId, after);
          const act = { action: 'shop_contact.updated', target: { kind: 'business', id: session.businessId } } as const;
          await recordUpdate(trx, request, act, { before, after }, CONTACT_AUDIT_FIELDS);
          return { redirect: SETTINGS };
        },
        (error) =>
          isAboutForm(error, CONTACT_FIELDS)
            ? drawSettings(request, reply, { error, form: CONTACT_FIELDS }, { contact: typed })
            : undefined,
      );
    },
  );

  // The operator approves it (`admin business approve-live`), as for any business.
  app.post(
    at(`${SETTINGS}/live-access`),
    { config: manage, schema: { hide: true, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, SETTINGS, async (trx, session) => {
        await requestLiveAccess(trx, session.businessId);
        await recordAct(trx, request, {
          action: 'live_access.requested',
          target: { kind: 'business', id: session.businessId },
        });
        return { redirect: `${SETTINGS}#live-access` };
      }),
  );
};
