import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { ApiError, invalid } from '../../http/errors.js';
import { startDownload } from '../../http/downloads.js';
import { exportProducts, importProducts, MAX_IMPORT_ROWS } from '../products/csv.js';
import { MAX_IMAGE_BYTES, prepareImage, storeImage } from '../products/images.js';
import { fieldsOf, productView, type OptionInput, type ProductFields, type VariantInput } from '../products/model.js';
import * as products from '../products/service.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from './context.js';
import { fieldChecks, formState, isAboutForm, refusalOf, type FormFields } from './form-errors.js';
import { dictionaries, parseMru } from './i18n.js';
import type { DashboardSession } from './sessions.js';
import { dashboardWrite, Token, Flash } from './write.js';
import { FORM_WRITE } from '../../http/idempotency/plugin.js';

const PAGE_SIZE = 20;
/** The API's own cap on a CSV upload. */
const MAX_CSV_BYTES = 20 * 1024 * 1024;
const FORM_LIMITS = { fields: 20, fieldSize: 64 * 1024, parts: 21 };
/** One file per upload form; an image is cut one byte past its cap so the route can name the refusal. */
const imageUpload = {
  dashboard: 'owner',
  write: FORM_WRITE,
  multipartOptions: { limits: { ...FORM_LIMITS, files: 1, fileSize: MAX_IMAGE_BYTES + 1 }, throwFileSizeLimit: false },
} as const;
const csvUpload = {
  dashboard: 'owner',
  write: FORM_WRITE,
  multipartOptions: { limits: { ...FORM_LIMITS, files: 1, fileSize: MAX_CSV_BYTES } },
} as const;
const PRODUCTS = `${DASHBOARD}/products`;
/** Blank rows drawn under a product's variants and options, to add some without JavaScript. */
const BLANK_ROWS = 2;

const FlashQuery = Type.Object(Flash, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) });
const ImageParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  imageId: Type.String({ minLength: 1, maxLength: 64 }),
});
const TokenForm = Type.Object(Token, { additionalProperties: false });
const DeleteForm = Type.Object(
  { ...Token, confirm: Type.Optional(Type.String({ maxLength: 3 })) },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    ...Flash,
    q: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('ACTIVE'), Type.Literal('DISABLED')])),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);
/** Repeated fields (one per variant or option row) arrive as one string or an array. */
const Rows = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 102 })]));
const ProductForm = Type.Object(
  {
    ...Token,
    name: Type.String({ maxLength: 200 }),
    price: Type.String({ maxLength: 20 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]),
    quantity: Type.Optional(Type.String({ maxLength: 12 })),
    sku: Type.Optional(Type.String({ maxLength: 300 })),
    variantId: Rows(64),
    variantType: Rows(50),
    variantLabel: Rows(100),
    variantAdjustment: Rows(20),
    variantQuantity: Rows(12),
    optionId: Rows(64),
    optionName: Rows(100),
    optionAdjustment: Rows(20),
  },
  { additionalProperties: false },
);

function rows(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** An amount in MRU as centimes, a leading minus allowed when `signed` (price adjustments). */
function money(field: string, text: string, signed: boolean): number {
  const trimmed = text.trim();
  const negative = signed && trimmed.startsWith('-');
  const centimes = parseMru(negative ? trimmed.slice(1) : trimmed);
  if (centimes === undefined) throw invalid(field, 'must be an amount in MRU, such as 250 or 250.50');
  return negative ? -centimes : centimes;
}

/** A stock count; empty means not tracked. */
function stock(field: string, text: string | undefined): number | null {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return null;
  if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) > 1_000_000_000) throw invalid(field, 'must be a whole number');
  return Number(trimmed);
}

type Form = Static<typeof ProductForm>;

/** The form's fields in the service's input shape; rows without a label (or name) are left out. */
function fieldsFromForm(
  form: Form,
): Pick<
  ProductFields,
  'name' | 'price' | 'description' | 'externalId' | 'status' | 'quantity' | 'variants' | 'options'
> {
  const checks = fieldChecks();
  const name = form.name.trim();
  if (name === '') checks.refuse('name', 'is required');
  const price = checks.read(() => money('price', form.price, false), 0);
  const sku = (form.sku ?? '').trim();
  // The API's own bound on an externalId.
  if (sku.length > 256) checks.refuse('sku', 'must have at most 256 characters');
  const quantity = checks.read(() => stock('quantity', form.quantity), null);
  const [ids, types, labels, adjustments, quantities] = [
    rows(form.variantId),
    rows(form.variantType),
    rows(form.variantLabel),
    rows(form.variantAdjustment),
    rows(form.variantQuantity),
  ];
  const variants: VariantInput[] = [];
  labels.forEach((label, index) => {
    if (label.trim() === '') return;
    const type = (types[index] ?? '').trim() || 'CUSTOM';
    const adjustment = (adjustments[index] ?? '').trim();
    variants.push({
      ...(ids[index] ? { _id: ids[index] } : {}),
      type,
      label: label.trim(),
      priceAdjustment:
        adjustment === '' ? 0 : checks.read(() => money(`variants.${index}.priceAdjustment`, adjustment, true), 0),
      quantity: checks.read(() => stock(`variants.${index}.quantity`, quantities[index]), null),
    });
  });
  const [optionIds, optionNames, optionAdjustments] = [
    rows(form.optionId),
    rows(form.optionName),
    rows(form.optionAdjustment),
  ];
  const options: OptionInput[] = [];
  optionNames.forEach((optionName, index) => {
    if (optionName.trim() === '') return;
    const adjustment = (optionAdjustments[index] ?? '').trim();
    options.push({
      ...(optionIds[index] ? { _id: optionIds[index] } : {}),
      name: optionName.trim(),
      priceAdjustment:
        adjustment === '' ? 0 : checks.read(() => money(`options.${index}.priceAdjustment`, adjustment, true), 0),
    });
  });
  checks.finish();
  return {
    name,
    price,
    description: (form.description ?? '').trim() || null,
    externalId: sku === '' ? null : sku,
    status: form.status,
    quantity,
    variants,
    options,
  };
}

/** An amount in centimes as the form shows it: "250.00", "-5.00". */
function mruText(centimes: number): string {
  return `${centimes < 0 ? '-' : ''}${(Math.abs(centimes) / 100).toFixed(2)}`;
}

/** The product form's fields as text, the rows of variants and options followed by blank ones. */
interface ProductFormValues {
  name: string;
  price: string;
  description: string;
  status: string;
  quantity: string;
  sku: string;
  variants: { id: string; type: string; label: string; adjustment: string; quantity: string }[];
  options: { id: string; name: string; adjustment: string }[];
}

const blankVariant = () => ({ id: '', type: '', label: '', adjustment: '', quantity: '' });
const blankOption = () => ({ id: '', name: '', adjustment: '' });

/** The form of a stored product (or of a new one). */
function storedValues(product: ReturnType<typeof productView> | null): ProductFormValues {
  return {
    name: product?.name ?? '',
    price: product ? mruText(product.price) : '',
    description: product?.description ?? '',
    status: product?.status ?? 'ACTIVE',
    quantity: product?.quantity == null ? '' : String(product.quantity),
    sku: product?.externalId ?? '',
    variants: [
      ...(product?.variants ?? []).map((v) => ({
        id: v._id,
        type: v.type,
        label: v.label,
        adjustment: mruText(v.priceAdjustment),
        quantity: v.quantity === null ? '' : String(v.quantity),
      })),
      ...Array.from({ length: BLANK_ROWS }, blankVariant),
    ],
    options: [
      ...(product?.options ?? []).map((o) => ({ id: o._id, name: o.name, adjustment: mruText(o.priceAdjustment) })),
      ...Array.from({ length: BLANK_ROWS }, blankOption),
    ],
  };
}

/** The form as it was posted, row for row, so a refused form is drawn again as typed. */
function postedValues(form: Form): ProductFormValues {
  const labels = rows(form.variantLabel);
  const [ids, types, adjustments, quantities] = [
    rows(form.variantId),
    rows(form.variantType),
    rows(form.variantAdjustment),
    rows(form.variantQuantity),
  ];
  const names = rows(form.optionName);
  const [optionIds, optionAdjustments] = [rows(form.optionId), rows(form.optionAdjustment)];
  return {
    name: form.name,
    price: form.price,
    description: form.description ?? '',
    status: form.status,
    quantity: form.quantity ?? '',
    sku: form.sku ?? '',
    variants: labels.map((label, i) => ({
      id: ids[i] ?? '',
      type: types[i] ?? '',
      label,
      adjustment: adjustments[i] ?? '',
      quantity: quantities[i] ?? '',
    })),
    options: names.map((name, i) => ({ id: optionIds[i] ?? '', name, adjustment: optionAdjustments[i] ?? '' })),
  };
}

/** The product form's fields its refusals name (variant and option rows by their index). */
const PRODUCT_FIELDS: FormFields = {
  fields: [
    { pattern: /^name$/, text: 'fieldRequired' },
    { pattern: /^price$/, text: 'fieldAmount' },
    { pattern: /^quantity$/, text: 'fieldWholeNumber' },
    { pattern: /^(sku|externalId)$/, text: 'fieldSku', as: 'sku' },
    { pattern: /^(variants|options)\.\d+\.priceAdjustment$/, text: 'fieldAmount' },
    { pattern: /^variants\.\d+\.quantity$/, text: 'fieldWholeNumber' },
    { pattern: /^confirm$/, text: 'fieldRequired' },
  ],
  codes: { EXTERNAL_ID_TAKEN: { field: 'sku', text: 'fieldSku' } },
};

function callerOf(session: DashboardSession): products.CatalogCaller {
  return { businessId: session.businessId, environment: session.environment, publicOnly: false };
}

/** A stored image's address on this origin (the page's CSP allows images from 'self' only). */
function sameOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname.startsWith('/media/') ? parsed.pathname : url;
  } catch {
    return url;
  }
}

/** The multipart form's file part (read whole by @fastify/multipart, within its limit). */
function uploadedFile(request: FastifyRequest): Buffer {
  const file = (request.body as Record<string, unknown> | undefined)?.file;
  if (!Buffer.isBuffer(file) || file.length === 0) throw new ApiError('NO_FILE', 'Choose a file to upload.');
  return file;
}

export const productPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, media } = app.services;
  const owner = { dashboard: 'owner', write: FORM_WRITE } as const;
  const productPath = (id: string) => `${PRODUCTS}/${encodeURIComponent(id)}`;

  app.get(at(PRODUCTS), { schema: { hide: true, querystring: ListQuery } }, async (request, reply) => {
    const session = requireSession(request);
    const { q, status } = request.query;
    const page = request.query.page ?? 1;
    const result = await products.listProducts(db, callerOf(session), {
      search: q || undefined,
      status: status || 'ALL',
      limit: PAGE_SIZE,
      offset: (page - 1) * PAGE_SIZE,
    });
    const filters = new URLSearchParams();
    if (q) filters.set('q', q);
    if (status) filters.set('status', status);
    return sendPage(request, reply, 'products', {
      products: result.items.map((row) => {
        const product = productView(row);
        const first = product.images[0];
        return { ...product, thumbnail: first ? sameOrigin(first.url) : null };
      }),
      total: result.total,
      page,
      pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
      filters: { q: q ?? '', status: status ?? '' },
      filterQuery: filters.toString(),
      maxImportRows: MAX_IMPORT_ROWS,
    });
  });

  /** The product page (or the new product's), its form drawn from `values` with `refusal`'s messages. */
  const drawProduct = async (
    request: FastifyRequest,
    reply: FastifyReply,
    id: string | null,
    values: ProductFormValues | null,
    refusal?: { error: ApiError; status: number },
  ) => {
    const product =
      id === null ? null : productView(await products.getProduct(db, callerOf(requireSession(request)), id));
    const t = dictionaries[langOf(request)];
    return sendPage(
      request,
      reply,
      'product',
      {
        product,
        images: (product?.images ?? []).map((image) => ({ ...image, src: sameOrigin(image.url) })),
        form: values ?? storedValues(product),
        ...formState(refusal ? refusalOf(refusal.error, t, PRODUCT_FIELDS) : undefined),
      },
      refusal?.status,
    );
  };

  app.get(at(`${PRODUCTS}/new`), { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) =>
    drawProduct(request, reply, null, null),
  );

  app.post(at(PRODUCTS), { config: owner, schema: { hide: true, body: ProductForm } }, async (request, reply) =>
    dashboardWrite(
      request,
      reply,
      `${PRODUCTS}/new`,
      async (trx, session) => {
        const product = await products.createProduct(trx, callerOf(session), fieldsFromForm(request.body));
        return { redirect: productPath(product.id) };
      },
      (error) =>
        isAboutForm(error, PRODUCT_FIELDS)
          ? drawProduct(request, reply, null, postedValues(request.body), { error, status: error.status })
          : undefined,
    ),
  );

  // The whole catalog, for a spreadsheet and back, with the API's download limits.
  app.get(at(`${PRODUCTS}/export`), { schema: { hide: true } }, async (request, reply) => {
    const caller = callerOf(requireSession(request));
    const file = await startDownload(caller, reply.raw, config.downloads, async () => ({
      headers: {
        'Content-Type': 'text/csv; charset=utf-8',
        'Cache-Control': 'no-store',
        'Content-Disposition': 'attachment; filename="products.csv"',
      },
      chunks: await exportProducts(db, caller),
    }));
    return reply.headers(file.headers).send(file.body);
  });

  app.post(at(`${PRODUCTS}/import`), { config: csvUpload, schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    let text: string;
    try {
      const bytes = uploadedFile(request);
      if (bytes.includes(0))
        throw new ApiError('CSV_INVALID', 'The CSV file contains NUL bytes; it is not a text file.');
      text = bytes.toString('utf8');
    } catch (error) {
      if (error instanceof ApiError) return reply.redirect(`${PRODUCTS}?error=${error.code}`, 303);
      throw error;
    }
    const dryRun = body.dryRun === 'on' || body.dryRun === 'true';
    return dashboardWrite(request, reply, PRODUCTS, async (trx, session) => {
      const report = await importProducts(trx, callerOf(session), text, dryRun);
      return { redirect: PRODUCTS, page: { template: 'import-report', data: { report } } };
    });
  });

  app.get(
    at(`${PRODUCTS}/:id`),
    { schema: { hide: true, params: IdParams, querystring: FlashQuery } },
    async (request, reply) => drawProduct(request, reply, request.params.id, null),
  );

  app.post(
    at(`${PRODUCTS}/:id`),
    { config: owner, schema: { hide: true, params: IdParams, body: ProductForm } },
    async (request, reply) => {
      const back = productPath(request.params.id);
      return dashboardWrite(
        request,
        reply,
        back,
        async (trx, session) => {
          await products.patchProduct(trx, callerOf(session), request.params.id, fieldsFromForm(request.body));
          return { redirect: back };
        },
        (error) =>
          isAboutForm(error, PRODUCT_FIELDS)
            ? drawProduct(request, reply, request.params.id, postedValues(request.body), {
                error,
                status: error.status,
              })
            : undefined,
      );
    },
  );

  app.post(
    at(`${PRODUCTS}/:id/delete`),
    { config: owner, schema: { hide: true, params: IdParams, body: DeleteForm } },
    async (request, reply) => {
      const released: string[] = [];
      return dashboardWrite(
        request,
        reply,
        PRODUCTS,
        async (trx, session) => {
          // The confirmation box is the "are you sure": without it nothing is deleted.
          if (request.body.confirm !== 'yes') throw invalid('confirm', 'is required');
          await products.deleteProduct(trx, callerOf(session), request.params.id, released);
          return {
            redirect: PRODUCTS,
            afterCommit: async () => {
              for (const key of released) await media.remove(key).catch(() => {});
            },
          };
        },
        (error) =>
          error.code === 'VALIDATION_ERROR'
            ? drawProduct(request, reply, request.params.id, null, { error, status: error.status })
            : undefined,
      );
    },
  );

  app.post(
    at(`${PRODUCTS}/:id/images`),
    { config: imageUpload, schema: { hide: true, params: IdParams } },
    async (request, reply) => {
      const back = productPath(request.params.id);
      let bytes: Buffer;
      let image: Awaited<ReturnType<typeof prepareImage>>;
      try {
        bytes = uploadedFile(request);
        if (bytes.length > MAX_IMAGE_BYTES) throw new ApiError('FILE_TOO_LARGE', 'The file is larger than 5 MB.');
        image = await prepareImage(bytes, config.publicUrl ?? `${request.protocol}://${request.host}`);
      } catch (error) {
        if (error instanceof ApiError) return reply.redirect(`${back}?error=${error.code}`, 303);
        throw error;
      }
      const written = { file: false };
      let committed = false;
      try {
        return await dashboardWrite(request, reply, back, async (trx, session) => {
          const who = callerOf(session);
          const shop = await products.shopOf(trx, who);
          const product = await products.resolveProduct(trx, who, shop.id, request.params.id, true);
          await storeImage(trx, media, product, image, bytes, written);
          return { redirect: back, afterCommit: async () => void (committed = true) };
        });
      } finally {
        // A refused or failed upload leaves no file behind.
        if (written.file && !committed) await media.remove(image.storageKey).catch(() => {});
      }
    },
  );

  app.post(
    at(`${PRODUCTS}/:id/images/:imageId/remove`),
    { config: owner, schema: { hide: true, params: ImageParams, body: TokenForm } },
    async (request, reply) => {
      const back = productPath(request.params.id);
      const released: string[] = [];
      return dashboardWrite(request, reply, back, async (trx, session) => {
        const who = callerOf(session);
        const shop = await products.shopOf(trx, who);
        const current = await products.resolveProduct(trx, who, shop.id, request.params.id, true);
        const images = fieldsOf(current).images.filter((image) => image.id !== request.params.imageId);
        if (images.length === current.images.length) throw new ApiError('NOT_FOUND', 'No such image.');
        await products.patchProduct(trx, who, current.id, { images }, released);
        return {
          redirect: back,
          afterCommit: async () => {
            for (const key of released) await media.remove(key).catch(() => {});
          },
        };
      });
    },
  );
};
