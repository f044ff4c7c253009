import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../../../db/schema.js';
import { Type } from 'typebox';
import { invalid, type ApiError } from '../../../../http/errors.js';
import { literalUnion } from '../../../../http/schemas.js';
import { payBaseUrl } from '../../../intents/routes.js';
import * as orders from '../../../orders/service.js';
import { FORWARD_ACTIONS, isOrderActionAllowed, ORDER_STATUSES, type OrderAction } from '../../../orders/state.js';
import { productView } from '../../../products/model.js';
import * as products from '../../../products/service.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { fieldChecks, formState, isAboutForm, refusalOf, type FormFields } from '../../form-errors.js';
import { formatPageAmount, readAmount } from '../../../../lib/i18n.js';
import { wordsFor } from '../../i18n.js';
import { paymentAttempts, searchOrders, sourceAmounts } from '../../queries.js';
import { splitRows } from '../../split.js';
import { partialRefundNote } from '../../refund-note.js';
import type { DashboardSession } from '../../sessions.js';
import { recordRefund } from '../../../audit/acts.js';
import { dashboardWrite, Token, Flash } from '../../write.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { pageQuery } from '../../page-query.js';

const ORDERS = `${DASHBOARD}/orders`;
const PAGE_SIZE = 20;
/** Blank rows under an order's lines in the modification form, to add products without JavaScript. */
const BLANK_ROWS = 2;

const FlashQuery = pageQuery(Flash);
const ListQuery = pageQuery({
  ...Flash,
  status: Type.Optional(literalUnion(['', ...ORDER_STATUSES])),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
});
const RefParams = Type.Object({ ref: Type.String({ minLength: 1, maxLength: 64 }) });
const TokenForm = Type.Object(Token, { additionalProperties: false });
const CancelForm = Type.Object({ ...Token, reason: Type.String({ maxLength: 500 }) }, { additionalProperties: false });
const RefundForm = Type.Object(
  {
    ...Token,
    amount: Type.Optional(Type.String({ maxLength: 20 })),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
const Rows = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 110 })]));
const ModificationForm = Type.Object(
  {
    ...Token,
    productId: Rows(256),
    variantId: Rows(64),
    optionIds: Rows(2000),
    quantity: Rows(6),
  },
  { additionalProperties: false },
);

function rows(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Between a product's id and its variant's in a picker's value (ids are letters, digits and _). */
const PICK_SEPARATOR = '~';
/** How many of the shop's products the picker offers (newest first). */
const PICKER_PRODUCTS = 200;

/** The fields of the modification form its refusals name: a row's quantity, or the lines as a whole. */
const MODIFICATION_FIELDS: FormFields<'orders'> = {
  fields: [
    { pattern: /^rows\.\d+\.quantity$/, text: 'fieldQuantity' },
    { pattern: /^items$/, text: 'fieldItems' },
  ],
  codes: {
    PRODUCT_NOT_FOUND: { field: 'items', text: 'fieldProduct' },
    VARIANT_NOT_FOUND: { field: 'items', text: 'fieldProduct' },
  },
};

/**
 * What the modification form's picker offers: each product on sale of the order's shop, and each
 * of its variants, with its unit price, as `productId` or `productId~variantId`.
 */
async function productChoices(db: Kysely<DB>, session: DashboardSession, mru: (centimes: number) => string) {
  const caller = { businessId: session.businessId, environment: session.environment, publicOnly: false };
  const { items } = await products.listProducts(db, caller, { status: 'ACTIVE', limit: PICKER_PRODUCTS, offset: 0 });
  return items.flatMap((row) => {
    const product = productView(row);
    if (product.variants.length === 0) return [{ value: product.id, label: `${product.name} — ${mru(product.price)}` }];
    return product.variants.map((variant) => ({
      value: `${product.id}${PICK_SEPARATOR}${variant._id}`,
      label: `${product.name} · ${variant.label} — ${mru(product.price + (variant.priceAdjustment ?? 0))}`,
    }));
  });
}

function callerOf(session: DashboardSession): orders.Caller {
  return { businessId: session.businessId, environment: session.environment };
}

/** The workflow buttons an order's page draws, from the one state table the API asks too. */
function allowedActions(order: orders.OrderRow): Record<Exclude<OrderAction, 'customerCancel'>, boolean> {
  return {
    accept: isOrderActionAllowed(order, 'accept'),
    ready: isOrderActionAllowed(order, 'ready'),
    pickup: isOrderActionAllowed(order, 'pickup'),
    deliver: isOrderActionAllowed(order, 'deliver'),
    cancel: isOrderActionAllowed(order, 'cancel'),
    refund: isOrderActionAllowed(order, 'refund'),
    modify: isOrderActionAllowed(order, 'modify'),
  };
}

export const orderPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, database, config } = app.services;
  const manage = { dashboard: 'orders.manage', write: FORM_WRITE } as const;
  const refund = { dashboard: 'payments.refund', write: FORM_WRITE } as const;
  const orderPath = (ref: string) => `${ORDERS}/${encodeURIComponent(ref)}`;
  const locator = (session: DashboardSession, ref: string) => ({ caller: callerOf(session), referenceNumber: ref });
  const view = async (request: FastifyRequest, order: orders.OrderRow) =>
    orders.orderView(
      order,
      (await orders.shopNames(db, [order.shop_id])).get(order.shop_id) ?? '',
      payBaseUrl(request),
    );

  app.get(
    at(ORDERS),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const status = request.query.status || undefined;
      const page = request.query.page ?? 1;
      const q = request.query.q?.trim() ?? '';
      const window = { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE };
      const result = q
        ? await searchOrders(database, session, { q, status, ...window })
        : await orders.listOrders(db, callerOf(session), { status, ...window });
      const filters = new URLSearchParams();
      if (status) filters.set('status', status);
      if (q) filters.set('q', q);
      return sendPage(request, reply, 'orders', {
        orders: result.items,
        refundNote: partialRefundNote(request),
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
        status: status ?? '',
        q,
        filterQuery: filters.toString(),
        statuses: ORDER_STATUSES,
      });
    },
  );

  /** An order's page; its modification form drawn from `typed` with `refusal`'s messages when refused. */
  const drawOrder = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ref: string,
    typed?: { picks: string[]; quantities: string[] },
    refusal?: ApiError,
  ) => {
    const session = requireSession(request);
    const order = await orders.getOrder(db, locator(session, ref));
    const actions = allowedActions(order);
    const t = wordsFor('orders', langOf(request));
    return sendPage(
      request,
      reply,
      'order',
      {
        amounts: await sourceAmounts(database, session, order.reference_number),
        attempts: await paymentAttempts(db, { orderId: order.id }),
        split: await splitRows(db, order.split_shares),
        refundNote: partialRefundNote(request),
        order: await view(request, order),
        actions,
        refundable: orders.refundableAmount(order),
        blankRows: BLANK_ROWS,
        choices: actions.modify ? await productChoices(db, session, (c) => formatPageAmount(c, langOf(request))) : [],
        typed: typed ?? null,
        ...formState(refusal ? refusalOf(refusal, t, MODIFICATION_FIELDS) : undefined),
      },
      refusal?.status,
    );
  };

  app.get(
    at(`${ORDERS}/:ref`),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, params: RefParams, querystring: FlashQuery } },
    async (request, reply) => drawOrder(request, reply, request.params.ref),
  );

  for (const action of FORWARD_ACTIONS) {
    app.post(
      at(`${ORDERS}/:ref/${action}`),
      { config: manage, schema: { hide: true, params: RefParams, body: TokenForm } },
      async (request, reply) => {
        const back = orderPath(request.params.ref);
        return dashboardWrite(request, reply, back, async (trx, session) => {
          await orders.transitionOrder(trx, locator(session, request.params.ref), action);
          return { redirect: back };
        });
      },
    );
  }

  app.post(
    at(`${ORDERS}/:ref/cancel`),
    { config: manage, schema: { hide: true, params: RefParams, body: CancelForm } },
    async (request, reply) => {
      const back = orderPath(request.params.ref);
      return dashboardWrite(request, reply, back, async (trx, session) => {
        const reason = request.body.reason.trim();
        // The API needs a reason to cancel: the customer is told why.
        if (reason === '') throw invalid('reason', 'is required');
        await orders.transitionOrder(trx, locator(session, request.params.ref), 'cancel', reason);
        return { redirect: back };
      });
    },
  );

  app.post(
    at(`${ORDERS}/:ref/refund`),
    { config: refund, schema: { hide: true, params: RefParams, body: RefundForm } },
    async (request, reply) => {
      const back = orderPath(request.params.ref);
      return dashboardWrite(request, reply, back, async (trx, session) => {
        const text = (request.body.amount ?? '').trim();
        const amount = text === '' ? undefined : readAmount(text, langOf(request));
        if (amount === undefined && text !== '')
          throw invalid('amount', 'must be an amount in MRU, such as 250 or 250.50');
        const reason = (request.body.reason ?? '').trim();
        const refunded = await orders.refundOrder(trx, locator(session, request.params.ref), {
          amount,
          ...(reason ? { reason } : {}),
        });
        await recordRefund(trx, request, { kind: 'order', id: refunded.reference_number }, refunded.refunds);
        return { redirect: back };
      });
    },
  );

  app.post(
    at(`${ORDERS}/:ref/propose-modification`),
    { config: manage, schema: { hide: true, params: RefParams, body: ModificationForm } },
    async (request, reply) => {
      const back = orderPath(request.params.ref);
      const [picks, variants, optionLists, quantities] = [
        rows(request.body.productId),
        rows(request.body.variantId),
        rows(request.body.optionIds),
        rows(request.body.quantity),
      ];
      return dashboardWrite(
        request,
        reply,
        back,
        async (trx, session) => {
          const checks = fieldChecks();
          const items: orders.RequestedItem[] = [];
          picks.forEach((pick, index) => {
            const quantityText = (quantities[index] ?? '').trim();
            if (pick.trim() === '' || quantityText === '' || quantityText === '0') return;
            if (!/^\d{1,4}$/.test(quantityText) || Number(quantityText) > 1000) {
              checks.refuse(`rows.${index}.quantity`, 'must be a whole number from 1 to 1000');
              return;
            }
            // A picked product arrives as "productId~variantId"; a line of the order as its id.
            const [productId, pickedVariant] = pick.trim().split(PICK_SEPARATOR);
            const variantId = pickedVariant || variants[index];
            const optionIds = (optionLists[index] ?? '')
              .split(',')
              .map((id) => id.trim())
              .filter(Boolean);
            items.push({
              productId: productId!,
              quantity: Number(quantityText),
              ...(variantId ? { variantId } : {}),
              ...(optionIds.length > 0 ? { optionIds } : {}),
            });
          });
          checks.finish();
          if (items.length === 0) throw invalid('items', 'must keep at least one line');
          await orders.proposeModification(trx, locator(session, request.params.ref), items, {
            maxAmount: config.intentMaxAmount,
          });
          return { redirect: back };
        },
        (error) =>
          isAboutForm(error, MODIFICATION_FIELDS)
            ? drawOrder(request, reply, request.params.ref, { picks, quantities }, error)
            : undefined,
      );
    },
  );
};
