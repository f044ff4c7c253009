import { Type } from 'typebox';
import { Nullable } from '../../http/schemas.js';

/** The data of stock events: camelCase, in the store envelope. */
const stockFields = {
  productId: Type.String(),
  externalId: Nullable(Type.String()),
  name: Type.String(),
  shopId: Type.String(),
  variantId: Type.Optional(Type.String({ description: 'when the stock of one variant crossed' })),
  variantLabel: Type.Optional(Type.String()),
};
const StockLowData = Type.Object(
  { ...stockFields, quantity: Type.Integer(), lowStockThreshold: Type.Integer() },
  { title: 'StockLowData' },
);
const StockOutData = Type.Object({ ...stockFields, quantity: Type.Literal(0) }, { title: 'StockOutData' });

/** When each stock event is sent, for the webhooks' documentation. */
export const productEventPayloads = {
  'product.stock_low': { when: 'Stock fell below the low-stock threshold.', data: StockLowData },
  'product.stock_out': { when: 'Stock reached zero.', data: StockOutData },
} as const;

type ProductEventPayloads = { [N in keyof typeof productEventPayloads]: (typeof productEventPayloads)[N]['data'] };

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends ProductEventPayloads {}
}
