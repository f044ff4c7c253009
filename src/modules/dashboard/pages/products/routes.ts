import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../../../db/schema.js';
import { ApiError, invalid } from '../../../../http/errors.js';
import { startDownload } from '../../../../http/downloads.js';
import { exportProducts, importProducts, MAX_IMPORT_ROWS } from '../../../products/csv.js';
import { MAX_IMAGE_BYTES, prepareImage, storeImage } from '../../../products/images.js';
import { fieldsOf, productView } from '../../../products/model.js';
import * as products from '../../../products/service.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { formState, isAboutForm, refusalOf } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import type { DashboardSession } from '../../sessions.js';
import { dashboardWrite, Token, Flash } from '../../write.js';
import { fieldsFromForm, postedValues, PRODUCT_FIELDS, ProductForm, storedValues } from './form.js';
import type { ProductFormValues } from './view.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { pageQuery } from '../../page-query.js';

const PAGE_SIZE = 20;
/** The API's own cap on a CSV upload. */
const MAX_CSV_BYTES = 20 * 1024 * 1024;
const FORM_LIMITS = { fields: 20, fieldSize: 64 * 1024, parts: 21 };
/** One file per upload form; an image is cut one byte past its cap so the route can name the refusal. */
const imageUpload = {
  dashboard: 'catalog.manage',
  write: FORM_WRITE,
  multipartOptions: { limits: { ...FORM_LIMITS, files: 1, fileSize: MAX_IMAGE_BYTES + 1 }, throwFileSizeLimit: false },
} as const;
const csvUpload = {
  dashboard: 'catalog.manage',
  write: FORM_WRITE,
  multipartOptions: { limits: { ...FORM_LIMITS, files: 1, fileSize: MAX_CSV_BYTES } },
} as const;
const PRODUCTS = `${DASHBOARD}/products`;

const FlashQuery = pageQuery(Flash);
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
const ListQuery = pageQuery({
  ...Flash,
  q: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('ACTIVE'), Type.Literal('DISABLED')])),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
});
function callerOf(session: DashboardSession): products.CatalogCaller {
  return { businessId: session.businessId, environment: session.environment, publicOnly: false };
}

/**
 * The product form's seller picker (decision 081): the business's ACTIVE sellers in the session's
 * environment, by name, and the product's own seller even if disabled since (saving keeps it).
 */
async function sellerChoices(
  db: Kysely<DB>,
  session: DashboardSession,
  current: string | null,
): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('sellers')
    .select(['id', 'name'])
    .where('business_id', '=', session.businessId)
    .where('environment', '=', session.environment)
    .where((eb) =>
      current ? eb.or([eb('status', '=', 'ACTIVE'), eb('id', '=', current)]) : eb('status', '=', 'ACTIVE'),
    )
    .orderBy('name')
    .orderBy('id')
    .limit(500)
    .execute();
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
  const manage = { dashboard: 'catalog.manage', write: FORM_WRITE } as const;
  const productPath = (id: string) => `${PRODUCTS}/${encodeURIComponent(id)}`;

  app.get(
    at(PRODUCTS),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
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
    },
  );

  /** The product page (or the new product's), its form drawn from `values` with `refusal`'s messages. */
  const drawProduct = async (
    request: FastifyRequest,
    reply: FastifyReply,
    id: string | null,
    values: ProductFormValues | null,
    refusal?: { error: ApiError; status: number },
  ) => {
    const session = requireSession(request);
    const product = id === null ? null : productView(await products.getProduct(db, callerOf(session), id));
    const t = wordsFor('products', langOf(request));
    return sendPage(
      request,
      reply,
      'product',
      {
        product,
        sellers: await sellerChoices(db, session, product?.seller ?? null),
        images: (product?.images ?? []).map((image) => ({ ...image, src: sameOrigin(image.url) })),
        form: values ?? storedValues(product),
        ...formState(refusal ? refusalOf(refusal.error, t, PRODUCT_FIELDS) : undefined),
      },
      refusal?.status,
    );
  };

  app.get(
    at(`${PRODUCTS}/new`),
    { config: { dashboard: 'catalog.manage' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => drawProduct(request, reply, null, null),
  );

  app.post(at(PRODUCTS), { config: manage, schema: { hide: true, body: ProductForm } }, async (request, reply) =>
    dashboardWrite(
      request,
      reply,
      `${PRODUCTS}/new`,
      async (trx, session) => {
        const product = await products.createProduct(
          trx,
          callerOf(session),
          fieldsFromForm(request.body, langOf(request)),
        );
        return { redirect: productPath(product.id) };
      },
      (error) =>
        isAboutForm(error, PRODUCT_FIELDS)
          ? drawProduct(request, reply, null, postedValues(request.body), { error, status: error.status })
          : undefined,
    ),
  );

  // The whole catalog, for a spreadsheet and back, with the API's download limits.
  app.get(
    at(`${PRODUCTS}/export`),
    { config: { dashboard: 'payments.read' }, schema: { hide: true } },
    async (request, reply) => {
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
    },
  );

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
    { config: { dashboard: 'payments.read' }, schema: { hide: true, params: IdParams, querystring: FlashQuery } },
    async (request, reply) => drawProduct(request, reply, request.params.id, null),
  );

  app.post(
    at(`${PRODUCTS}/:id`),
    { config: manage, schema: { hide: true, params: IdParams, body: ProductForm } },
    async (request, reply) => {
      const back = productPath(request.params.id);
      return dashboardWrite(
        request,
        reply,
        back,
        async (trx, session) => {
          await products.patchProduct(
            trx,
            callerOf(session),
            request.params.id,
            fieldsFromForm(request.body, langOf(request)),
          );
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
    { config: manage, schema: { hide: true, params: IdParams, body: DeleteForm } },
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
    { config: manage, schema: { hide: true, params: ImageParams, body: TokenForm } },
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
