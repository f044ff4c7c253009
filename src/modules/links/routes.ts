import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/context.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageOf, pageWindow } from '../../http/schemas.js';
import { payBaseUrl } from '../intents/routes.js';
import { Intent } from '../intents/schemas.js';
import { intentView } from '../intents/service.js';
import {
  CreateLinkBody,
  LinkParams,
  ListLinkIntentsQuery,
  ListLinksQuery,
  PaymentLink,
  UpdateLinkBody,
} from './schemas.js';
import { recordLinkUpdate } from '../audit/acts.js';
import { recordAct } from '../audit/record.js';
import * as links from './service.js';
import { linkView } from './views.js';

const tags = ['Payment links'];
const LINK_CODES = ['PAYMENT_LINK_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

const LINK_PAYMENTS = `Each payment through a link is an intent of its own, made and paid in one transaction once the payer's wallet PIN checks out: it carries \`paymentLink\` (and \`payerName\`, \`payerNote\` when the link collects them) in its get response and \`payment_link\` in its \`payment.*\` events, which are those of any intent (\`payment.created\`, then \`payment.confirmed\`). A visitor who does not pay creates nothing. A payer meets PAYMENT_LINK_INACTIVE, PAYMENT_LINK_COMPLETED or PAYMENT_LINK_EXPIRED on a link that takes no payment; a payment refused that way, or by too little in the wallet, debits nothing and leaves no intent.`;

const LINK_STATUSES_TEXT =
  '`status` is INACTIVE when the merchant switched it off (`active: false`), else COMPLETED once `paymentsCount` reaches `maxPayments`, else EXPIRED after `expiresAt`, else ACTIVE. Raising `maxPayments`, moving `expiresAt` or reactivating opens it again.';

/** Payment links (issue 50): one page, shared or printed, that many payers pay. */
export const paymentLinkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, database, config } = app.services;
  const limits = { maxAmount: config.intentMaxAmount };

  app.post(
    '/payment-links',
    {
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: ['METADATA_TOO_MANY_KEYS', 'METADATA_VALUE_TOO_LONG'],
        openapi: {
          requestExample: {
            label: 'Couscous royal (2 parts)',
            amountType: 'FIXED',
            amount: 150000,
            maxPayments: 50,
            collect: { name: true, note: true },
            metadata: { menu: 'friday' },
          },
        },
      },
      schema: {
        operationId: 'createPaymentLink',
        summary: 'Create a payment link',
        description: `A link (\`url\`, and its QR code at \`qrUrl\`) that many payers pay, each once per payment: a FIXED \`amount\`, or an OPEN amount the payer chooses between \`minAmount\` and \`maxAmount\` (each within the intent limits). \`maxPayments\` completes it after that many payments; \`expiresAt\` ends it; \`collect\` asks the payer's name (required) and offers a note. Mixing the amount types' fields, a minimum above the maximum, an amount outside the intent limits or a past \`expiresAt\` answer VALIDATION_ERROR naming the field.\n\n${LINK_PAYMENTS}`,
        tags,
        body: CreateLinkBody,
        response: { 201: Envelope(PaymentLink) },
      },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) => {
        const link = await links.createLink(trx, requireAuth(request.auth), request.body, limits);
        const target = { kind: 'payment_link', id: link.reference_number };
        await recordAct(trx, request, {
          action: 'payment_link.created',
          target,
          details: { amountType: link.amount_type },
        });
        return linkView(link, payBaseUrl(request));
      }),
  );

  app.get(
    '/payment-links',
    {
      config: { auth: 'secret', scope: 'intents:read' },
      schema: {
        operationId: 'listPaymentLinks',
        summary: 'List payment links',
        description: `The links of the key's environment, newest first, paginated. Filter: \`status\`.\n\n${LINK_STATUSES_TEXT}`,
        tags,
        querystring: ListLinksQuery,
        response: { 200: Envelope(Paginated(PaymentLink)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await links.listLinks(db, requireAuth(request.auth), {
        status: request.query.status,
        limit: window.limit,
        offset: window.offset,
      });
      const payBase = payBaseUrl(request);
      return {
        success: true as const,
        data: pageOf(window, { items: result.items.map((link) => linkView(link, payBase)), total: result.total }),
      };
    },
  );

  app.get(
    '/payment-links/:referenceNumber',
    {
      config: { auth: 'secret', scope: 'intents:read', errorCodes: LINK_CODES },
      schema: {
        operationId: 'retrievePaymentLink',
        summary: 'Retrieve a payment link',
        description: `One link by its \`PL-\` reference, with \`paymentsCount\` and \`amountCollected\` (what its payments paid; refunds are not deducted). A link of the other environment answers SANDBOX_MISMATCH.\n\n${LINK_STATUSES_TEXT}`,
        tags,
        params: LinkParams,
        response: { 200: Envelope(PaymentLink) },
      },
    },
    async (request) => ({
      success: true as const,
      data: linkView(
        await links.getLink(db, requireAuth(request.auth), request.params.referenceNumber),
        payBaseUrl(request),
      ),
    }),
  );

  app.patch(
    '/payment-links/:referenceNumber',
    {
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: [...LINK_CODES, 'METADATA_TOO_MANY_KEYS', 'METADATA_VALUE_TOO_LONG'],
        openapi: { requestExample: { active: false, inactiveMessage: 'Sold out, thank you!' } },
      },
      schema: {
        operationId: 'updatePaymentLink',
        summary: 'Update a payment link',
        description: `Changes \`label\`, \`active\` (false switches the link off, true on again), \`inactiveMessage\` (what payers read while it is off), \`maxPayments\` (not below \`paymentsCount\`; null: no limit), \`expiresAt\` (in the future; null: never) or \`metadata\` (replaced whole). A payer on the link's page when it is switched off is refused and debited nothing. The amount is not changed: make a new link.\n\n${LINK_STATUSES_TEXT}`,
        tags,
        params: LinkParams,
        body: UpdateLinkBody,
        response: { 200: Envelope(PaymentLink) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const before = await links.getLink(trx, requireAuth(request.auth), request.params.referenceNumber);
        const after = await links.updateLink(
          trx,
          requireAuth(request.auth),
          request.params.referenceNumber,
          request.body,
        );
        await recordLinkUpdate(trx, request, before, after);
        return linkView(after, payBaseUrl(request));
      }),
  );

  app.get(
    '/payment-links/:referenceNumber/intents',
    {
      config: { auth: 'secret', scope: 'intents:read', errorCodes: LINK_CODES },
      schema: {
        operationId: 'listPaymentLinkIntents',
        summary: "List a payment link's intents",
        description: `The intents the link made, one per payment, newest first, paginated.\n\n${LINK_PAYMENTS}`,
        tags,
        params: LinkParams,
        querystring: ListLinkIntentsQuery,
        response: { 200: Envelope(Paginated(Intent)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await links.linkIntents(
        database,
        requireAuth(request.auth),
        request.params.referenceNumber,
        window,
      );
      const payBase = payBaseUrl(request);
      return {
        success: true as const,
        data: pageOf(window, { items: result.items.map((intent) => intentView(intent, payBase)), total: result.total }),
      };
    },
  );
};
