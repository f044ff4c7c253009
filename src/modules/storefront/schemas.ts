import { Type } from 'typebox';
import { literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { WALLET_PHONE_PATTERN } from '../../lib/phone.js';
import { ORDER_STATUSES } from '../orders/state.js';

/** The storefront API's schemas: what a customer sends and sees (catalog, quote, order). */

export const tags = ['Storefront'];
export const ShopParams = Type.Object({ shopId: Type.String({ minLength: 1, maxLength: 64 }) });
export const OrderParams = Type.Object({ orderRef: Type.String({ minLength: 1, maxLength: 64 }) });
export const Mode = Type.Optional(
  Type.Union([Type.Literal('test'), Type.Literal('live')], {
    description: "which of the business's shops: test is the sandbox storefront",
  }),
);
export const ModeQuery = Type.Object({ mode: Mode }, { additionalProperties: false });
export const Pin = Type.String({ pattern: '^[0-9]{4,6}$', description: 'the wallet PIN' });
/** The wallet phone a customer types (decision 056); the route reads it as E.164 before its handler. */
export const WalletPhone = Type.String({
  pattern: WALLET_PHONE_PATTERN,
  description:
    'the wallet phone, E.164; a Mauritanian number may also be sent as its 8 national digits (`20000001` is read as `+22220000001`)',
});

export const Line = Type.Object({
  productId: Type.String(),
  name: Type.String(),
  quantity: Type.Integer(),
  price: Type.Integer({ description: 'unit price, centimes' }),
  variant: Type.Optional(Type.Object({ _id: Type.String(), label: Type.String(), priceAdjustment: Type.Integer() })),
  options: Type.Optional(
    Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
  ),
  lineTotal: Type.Integer({ description: '(price + variant + options) × quantity, centimes' }),
});
export const CatalogProduct = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Type.Integer(),
  isFlexiblePrice: Type.Boolean(),
  inStock: Type.Boolean(),
  images: Type.Array(Type.Object({ url: Type.String() })),
  variants: Type.Array(
    Type.Object({
      _id: Type.String(),
      type: Type.String(),
      label: Type.String(),
      priceAdjustment: Type.Integer(),
      inStock: Type.Boolean(),
    }),
  ),
  options: Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
});
export const Catalog = Type.Object(
  {
    shopId: Type.String(),
    shopName: Type.String(),
    currency: Type.Literal('MRU'),
    payerFee: Type.Integer({ description: 'added to every order, centimes' }),
    sandbox: Type.Boolean(),
    search: Nullable(Type.String()),
    items: Type.Array(CatalogProduct),
    page: Type.Integer(),
    limit: Type.Integer(),
    total: Type.Integer(),
    hasMore: Type.Boolean(),
    testWallets: Type.Array(
      Type.Object({ phone: Type.String(), pin: Type.String(), note: Type.String(), locked: Type.Boolean() }),
    ),
  },
  { title: 'StorefrontCatalog' },
);
export const Quote = Type.Object(
  {
    items: Type.Array(Line),
    totalAmount: Type.Integer(),
    payerFee: Type.Integer(),
    totalToPay: Type.Integer({ description: 'what the wallet is charged: total + payer fee' }),
    currency: Type.Literal('MRU'),
    sandbox: Type.Boolean(),
  },
  { title: 'StorefrontQuote' },
);
export const Status = literalUnion(ORDER_STATUSES);
export const CustomerOrder = Type.Object(
  {
    orderRef: Type.String({ description: 'the unguessable reference of the customer link /o/{orderRef}' }),
    orderUrl: Type.String(),
    referenceNumber: Type.String(),
    shopId: Type.String(),
    shopName: Type.String(),
    status: Status,
    items: Type.Array(Line),
    totalAmount: Type.Integer(),
    currency: Type.Literal('MRU'),
    customerName: Type.String(),
    customerPhone: Type.String({ description: 'masked' }),
    paid: Type.Boolean(),
    amountPaid: Type.Integer(),
    payerFee: Type.Integer(),
    totalAmountRefunded: Type.Integer(),
    refunds: Type.Array(Type.Object({ amount: Type.Integer(), createdAt: Timestamp })),
    refundable: Type.Integer(),
    cancellationReason: Nullable(Type.String()),
    proposedModification: Nullable(
      Type.Object({
        items: Type.Array(Line),
        totalAmount: Type.Integer(),
        difference: Type.Integer({
          description: 'new total - current total: charged if positive, refunded if negative',
        }),
        proposedAt: Timestamp,
      }),
    ),
    canCancel: Type.Boolean(),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'CustomerOrder' },
);
