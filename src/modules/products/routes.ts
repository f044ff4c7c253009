import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requireAuth } from '../../http/context.js';
import { startDownload } from '../../http/downloads.js';
import { ApiError } from '../../http/errors.js';
import { API_UPLOAD, API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageWindow } from '../../http/schemas.js';
import { exportProducts, importProducts } from './csv.js';
import { productDocs } from './docs.js';
import { MAX_IMAGE_BYTES, prepareImage, storeImage } from './images.js';
import { productView } from './model.js';
import {
  BulkInventoryBody,
  InventoryBody,
  Product,
  ProductBody,
  ProductExportQuery,
  ProductListQuery,
  ProductParams,
  ProductPatchBody,
} from './schemas.js';
import * as products from './service.js';

const tags = ['Products'];
const MAX_CSV_BYTES = 20 * 1024 * 1024;

function caller(request: FastifyRequest): products.CatalogCaller {
  const auth = requireAuth(request.auth);
  return { businessId: auth.businessId, environment: auth.environment, publicOnly: auth.kind === 'publishable' };
}

/** The one file of a multipart request, from the field `file`, read whole (within `limit`). */
async function readUpload(request: FastifyRequest, limit: number, tooLarge: string): Promise<Buffer> {
  let part;
  try {
    part = await request.file({ limits: { fileSize: limit, files: 1 } });
  } catch {
    throw new ApiError('NO_FILE', 'Send the file as multipart/form-data in the field "file".');
  }
  if (!part || part.fieldname !== 'file') throw new ApiError('NO_FILE');
  try {
    return await part.toBuffer();
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new ApiError('FILE_TOO_LARGE', tooLarge);
    // Reading the part fails only on the body itself: cut short, or not the multipart it claims.
    throw new ApiError('VALIDATION_ERROR', 'The multipart body is incomplete or malformed.', [
      { field: 'body', message: 'incomplete or malformed multipart body' },
    ]);
  }
}

/**
 * An upload route's multipart hook: the file is read whole into the body before the handler, so
 * the write path's key covers its bytes. What it refuses (no file, too large, not text) comes
 * before the key covers anything, and is not stored under it.
 */
function fileAsBody(read: (request: FastifyRequest) => Promise<Buffer>) {
  return async (request: FastifyRequest) => {
    request.body = await read(request);
  };
}

/** The bytes `fileAsBody` read. */
function uploaded(body: unknown): Buffer {
  if (!Buffer.isBuffer(body)) throw new Error('upload route reached without its file: check its preHandler');
  return body;
}

async function readCsv(request: FastifyRequest): Promise<Buffer> {
  const bytes = request.isMultipart()
    ? await readUpload(request, MAX_CSV_BYTES, 'The CSV file is larger than 20 MB.')
    : typeof request.body === 'string'
      ? Buffer.from(request.body)
      : undefined;
  if (!bytes)
    throw new ApiError('NO_FILE', 'Send the CSV as multipart/form-data in the field "file", or as a text/csv body.');
  if (bytes.includes(0)) throw new ApiError('CSV_INVALID', 'The CSV file contains NUL bytes; it is not a text file.');
  return bytes;
}

export const productRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, media } = app.services;
  await app.register(multipart);
  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: MAX_CSV_BYTES }, (_request, body, done) =>
    done(null, body),
  );
  const read = { auth: 'publishable', scope: 'store.products:read' } as const;
  const writeRoute = { auth: 'secret', scope: 'store.products:write', write: API_WRITE } as const;
  const publicView = (request: FastifyRequest) => requireAuth(request.auth).kind === 'publishable';
  /** Runs a write that may release uploaded images, and deletes their files once it committed. */
  async function releasingImages(
    request: FastifyRequest,
    run: (released: string[]) => Promise<FastifyReply>,
  ): Promise<FastifyReply> {
    const released: string[] = [];
    const reply = await run(released);
    for (const key of released) {
      // The row is gone, so the file is no longer served; a leftover file is only disk space.
      await media
        .remove(key)
        .catch((error: unknown) => request.log.warn({ err: error, key }, 'media file not deleted'));
    }
    return reply;
  }

  app.post(
    '/store/products',
    {
      config: { ...writeRoute, ...productDocs.createProduct.config },
      schema: { ...productDocs.createProduct.schema, tags, body: ProductBody, response: { 201: Envelope(Product) } },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) =>
        productView(await products.createProduct(trx, caller(request), request.body)),
      ),
  );

  app.get(
    '/store/products/:id',
    {
      config: { ...read, ...productDocs.retrieveProduct.config },
      schema: {
        ...productDocs.retrieveProduct.schema,
        tags,
        params: ProductParams,
        response: { 200: Envelope(Product) },
      },
    },
    async (request) => ({
      success: true as const,
      data: productView(await products.getProduct(db, caller(request), request.params.id), publicView(request)),
    }),
  );

  app.get(
    '/store/products',
    {
      config: { ...read, ...productDocs.listProducts.config },
      schema: {
        ...productDocs.listProducts.schema,
        tags,
        querystring: ProductListQuery,
        response: { 200: Envelope(Paginated(Product)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const { search, status, sortBy, categoryId } = request.query;
      const result = await products.listProducts(db, caller(request), {
        search,
        status,
        sortBy,
        categoryId,
        limit,
        offset,
      });
      return {
        success: true as const,
        data: {
          items: result.items.map((row) => productView(row, publicView(request))),
          page,
          limit,
          total: result.total,
          hasMore: offset + result.items.length < result.total,
        },
      };
    },
  );

  app.put(
    '/store/products/:id',
    {
      config: { ...writeRoute, ...productDocs.replaceProduct.config },
      schema: {
        ...productDocs.replaceProduct.schema,
        tags,
        params: ProductParams,
        body: ProductBody,
        response: { 200: Envelope(Product) },
      },
    },
    async (request, reply) =>
      releasingImages(request, (released) =>
        write(request, reply, 200, async (trx) =>
          productView(await products.replaceProduct(trx, caller(request), request.params.id, request.body, released)),
        ),
      ),
  );

  app.patch(
    '/store/products/:id',
    {
      config: { ...writeRoute, ...productDocs.updateProduct.config },
      schema: {
        ...productDocs.updateProduct.schema,
        tags,
        params: ProductParams,
        body: ProductPatchBody,
        response: { 200: Envelope(Product) },
      },
    },
    async (request, reply) =>
      releasingImages(request, (released) =>
        write(request, reply, 200, async (trx) =>
          productView(await products.patchProduct(trx, caller(request), request.params.id, request.body, released)),
        ),
      ),
  );

  app.delete(
    '/store/products/:id',
    {
      config: { ...writeRoute, ...productDocs.deleteProduct.config },
      schema: {
        ...productDocs.deleteProduct.schema,
        tags,
        params: ProductParams,
        response: { 200: Envelope(Type.Object({ deleted: Type.Literal(true) })) },
      },
    },
    async (request, reply) =>
      releasingImages(request, (released) =>
        write(request, reply, 200, (trx) => products.deleteProduct(trx, caller(request), request.params.id, released)),
      ),
  );

  app.post(
    '/store/products/:id/images',
    {
      config: { ...writeRoute, write: API_UPLOAD, ...productDocs.uploadProductImage.config },
      preHandler: fileAsBody((request) => readUpload(request, MAX_IMAGE_BYTES, 'The file is larger than 5 MB.')),
      schema: {
        ...productDocs.uploadProductImage.schema,
        tags,
        params: ProductParams,
        consumes: ['multipart/form-data'],
        response: { 201: Envelope(Type.Object({ url: Type.String(), imageId: Type.String() })) },
      },
    },
    async (request, reply) => {
      const bytes = uploaded(request.body);
      const who = caller(request);
      const shop = await products.shopOf(db, who);
      await products.resolveProduct(db, who, shop.id, request.params.id);
      const image = await prepareImage(bytes, config.publicUrl ?? `${request.protocol}://${request.host}`);
      // The file is written only once every check passed (product locked, room for one more
      // image), inside the transaction that records it; if that transaction fails, it goes.
      const written = { file: false };
      try {
        return await write(request, reply, 201, async (trx) => {
          const product = await products.resolveProduct(trx, who, shop.id, request.params.id, true);
          await storeImage(trx, media, product, image, bytes, written);
          return { url: image.url, imageId: image.id };
        });
      } catch (error) {
        if (written.file) await media.remove(image.storageKey).catch(() => {});
        throw error;
      }
    },
  );

  app.patch(
    '/store/products/:id/inventory',
    {
      config: { ...writeRoute, ...productDocs.updateProductInventory.config },
      schema: {
        ...productDocs.updateProductInventory.schema,
        tags,
        params: ProductParams,
        body: InventoryBody,
        response: { 200: Envelope(Product) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        productView(await products.changeInventory(trx, caller(request), request.params.id, request.body)),
      ),
  );

  app.post(
    '/store/inventory',
    {
      config: { ...writeRoute, ...productDocs.updateInventoryBatch.config },
      schema: {
        ...productDocs.updateInventoryBatch.schema,
        tags,
        body: BulkInventoryBody,
        response: { 200: Envelope(Type.Object({ items: Type.Array(Product) })) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => ({
        items: (await products.changeInventoryBulk(trx, caller(request), request.body.items)).map((row) =>
          productView(row),
        ),
      })),
  );

  app.post(
    '/store/products/import',
    {
      config: { ...writeRoute, write: API_UPLOAD, ...productDocs.importProducts.config },
      preHandler: fileAsBody(readCsv),
      schema: {
        ...productDocs.importProducts.schema,
        tags,
        consumes: ['multipart/form-data', 'text/csv'],
        querystring: Type.Object(
          { dryRun: Type.Optional(Type.Boolean({ description: 'validate and report without writing' })) },
          { additionalProperties: false },
        ),
        response: {
          200: Envelope(
            Type.Object({
              dryRun: Type.Boolean(),
              created: Type.Integer(),
              updated: Type.Integer(),
              unchanged: Type.Integer(),
              failed: Type.Integer(),
              errors: Type.Array(Type.Object({ row: Type.Integer(), code: Type.String(), message: Type.String() })),
            }),
          ),
        },
      },
    },
    async (request, reply) => {
      const text = uploaded(request.body).toString('utf8');
      const dryRun = request.query.dryRun ?? false;
      const who = caller(request);
      return write(request, reply, 200, (trx) => importProducts(trx, who, text, dryRun));
    },
  );

  app.get(
    '/store/products/export',
    {
      config: { auth: 'secret', scope: 'store.products:read', ...productDocs.exportProducts.config },
      schema: { ...productDocs.exportProducts.schema, tags, querystring: ProductExportQuery, produces: ['text/csv'] },
    },
    async (request, reply) => {
      const who = caller(request);
      const file = await startDownload(who, reply.raw, config.downloads, async () => ({
        headers: {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Disposition': 'attachment; filename="products.csv"',
        },
        chunks: await exportProducts(db, who, request.query),
      }));
      return reply.headers(file.headers).send(file.body);
    },
  );
};

export const mediaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, media } = app.services;
  app.get(
    '/media/:key',
    { schema: { hide: true, params: Type.Object({ key: Type.String({ minLength: 1, maxLength: 100 }) }) } },
    async (request, reply) => {
      const file = await db
        .selectFrom('media_files')
        .select(['content_type', 'storage_key'])
        .where('storage_key', '=', request.params.key)
        .executeTakeFirst();
      const opened = file ? await media.open(file.storage_key) : undefined;
      if (!file || !opened) throw new ApiError('NOT_FOUND', 'No such file.');
      return reply
        .type(file.content_type)
        .header('Content-Length', String(opened.size))
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .send(opened.stream);
    },
  );
};
