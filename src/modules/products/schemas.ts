import { Type } from 'typebox';
import { Pagination, Timestamp, Nullable } from '../../http/schemas.js';
import { sellerIdAs } from '../sellers/schemas.js';

/** decisions.md "Products" limits; amounts are integer centimes. */
const MAX_CENTIMES = 1_000_000_000_000;
const Centimes = Type.Integer({ minimum: 0, maximum: MAX_CENTIMES, description: 'integer centimes' });
const Adjustment = Type.Integer({
  minimum: -MAX_CENTIMES,
  maximum: MAX_CENTIMES,
  description: 'centimes, may be negative',
});
const Stock = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });
const Status = Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]);

const ImageInput = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'keeps an existing image' })),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    sortOrder: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  },
  { additionalProperties: false },
);
const VariantInput = Type.Object(
  {
    _id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'keeps an existing variant' })),
    type: Type.String({ minLength: 1, maxLength: 50, description: 'COLOR, SIZE or a custom type' }),
    label: Type.String({ minLength: 1, maxLength: 100 }),
    value: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    priceAdjustment: Type.Optional(Adjustment),
    quantity: Type.Optional(Nullable(Stock)),
  },
  { additionalProperties: false },
);
const OptionInput = Type.Object(
  {
    _id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'keeps an existing option' })),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    priceAdjustment: Adjustment,
  },
  { additionalProperties: false },
);
const PreparationTime = Type.Object(
  {
    value: Type.Integer({ minimum: 0, maximum: 100_000 }),
    unit: Type.Union([Type.Literal('minutes'), Type.Literal('hours'), Type.Literal('days')]),
  },
  { additionalProperties: false },
);

const optionalFields = {
  description: Nullable(Type.String({ maxLength: 5000 })),
  externalId: Nullable(Type.String({ minLength: 1, maxLength: 256 })),
  categoryId: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
  quantity: Nullable(Stock),
  status: Status,
  isFlexiblePrice: Type.Boolean(),
  costBasis: Nullable(Centimes),
  lowStockThreshold: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
  images: Type.Array(ImageInput, { maxItems: 20 }),
  variants: Type.Array(VariantInput, { maxItems: 100 }),
  options: Type.Array(OptionInput, { maxItems: 50 }),
  preparationTime: Nullable(PreparationTime),
  seller: Nullable(
    sellerIdAs(
      "the seller (SL-…) the product belongs to: its order lines settle to that seller, less the seller's commissionBps; null: the business's own",
    ),
  ),
};
type OptionalFields = typeof optionalFields;

/** Create and PUT: name and price required; every other field optional, reset to its default when absent. */
export const ProductBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    price: Centimes,
    ...(Object.fromEntries(Object.entries(optionalFields).map(([k, v]) => [k, Type.Optional(v)])) as {
      [K in keyof OptionalFields]: ReturnType<typeof Type.Optional<OptionalFields[K]>>;
    }),
  },
  { additionalProperties: false },
);

/** PATCH: only the fields sent change; `null` clears a nullable field. */
export const ProductPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    price: Type.Optional(Centimes),
    ...(Object.fromEntries(Object.entries(optionalFields).map(([k, v]) => [k, Type.Optional(v)])) as {
      [K in keyof OptionalFields]: ReturnType<typeof Type.Optional<OptionalFields[K]>>;
    }),
  },
  { additionalProperties: false },
);

export const ProductParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256, description: 'the product id or its externalId' }),
});

/** The list's filters; the export takes exactly these. */
const ProductFilters = {
  search: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(Type.Union([Status, Type.Literal('ALL')])),
  categoryId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};

export const ProductExportQuery = Type.Object(ProductFilters, { additionalProperties: false });

export const ProductListQuery = Type.Object(
  {
    ...ProductFilters,
    sortBy: Type.Optional(
      Type.Union([
        Type.Literal('newest'),
        Type.Literal('oldest'),
        Type.Literal('price_asc'),
        Type.Literal('price_desc'),
      ]),
    ),
    ...Pagination,
  },
  { additionalProperties: false },
);

export const Product = Type.Object(
  {
    id: Type.String(),
    externalId: Nullable(Type.String()),
    shopId: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    price: Centimes,
    currency: Type.Literal('MRU'),
    costBasis: Nullable(Centimes),
    categoryId: Nullable(Type.String()),
    quantity: Nullable(Type.Integer()),
    status: Status,
    isFlexiblePrice: Type.Boolean(),
    lowStockThreshold: Type.Integer(),
    preparationTime: Nullable(PreparationTime),
    images: Type.Array(Type.Object({ id: Type.String(), url: Type.String(), sortOrder: Type.Integer() })),
    variants: Type.Array(
      Type.Object({
        _id: Type.String(),
        type: Type.String(),
        label: Type.String(),
        value: Nullable(Type.String()),
        priceAdjustment: Type.Integer(),
        quantity: Nullable(Type.Integer()),
      }),
    ),
    options: Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
    seller: Nullable(Type.String({ description: 'the seller the product belongs to (null for publishable keys)' })),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Product' },
);

export const InventoryBody = Type.Object(
  {
    quantity: Type.Optional(Nullable(Stock)),
    delta: Type.Optional(Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 })),
    variantId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    variantLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const BulkInventoryBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          quantity: Type.Optional(Nullable(Stock)),
          delta: Type.Optional(Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 })),
          variantId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          variantLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500 },
    ),
  },
  { additionalProperties: false },
);
