import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import type { MediaStorage } from '../../lib/media-storage.js';
import type { ProductRow } from './model.js';

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_IMAGES = 20;
const IMAGE_TYPES: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

/** The type read from the bytes themselves, never from the file name or the part's header. */
export async function sniffImage(bytes: Buffer): Promise<{ contentType: string; extension: string }> {
  // Loaded on the first upload: most processes never take one, and loading it takes 60 ms.
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(bytes);
  const extension = detected ? IMAGE_TYPES[detected.mime] : undefined;
  if (!detected || !extension) {
    throw new ApiError(
      'INVALID_FILE_TYPE',
      `The file must be a JPEG, PNG or WebP image${detected ? `, not ${detected.mime}` : ''}.`,
    );
  }
  return { contentType: detected.mime, extension };
}

/** Appends an uploaded image to a locked product, after its existing images. */
export async function appendImage(
  trx: Transaction<DB>,
  product: ProductRow,
  image: { id: string; url: string; storageKey: string; contentType: string; size: number },
): Promise<ProductRow> {
  if (product.images.length >= MAX_IMAGES) {
    throw new ApiError('VALIDATION_ERROR', `A product has at most ${MAX_IMAGES} images.`, [
      { field: 'file', message: `the product already has ${MAX_IMAGES} images` },
    ]);
  }
  await trx
    .insertInto('media_files')
    .values({
      id: image.id,
      business_id: product.business_id,
      storage_key: image.storageKey,
      content_type: image.contentType,
      size_bytes: image.size,
    })
    .execute();
  const sortOrder = product.images.reduce((max, existing) => Math.max(max, existing.sortOrder + 1), 0);
  const images = [...product.images, { id: image.id, url: image.url, sortOrder }];
  return trx
    .updateTable('products')
    .set({ images: JSON.stringify(images), updated_at: new Date() })
    .where('id', '=', product.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An upload checked and named, not yet stored: its type read from the bytes, its public URL under `/media`. */
export interface PreparedImage {
  id: string;
  url: string;
  storageKey: string;
  contentType: string;
  size: number;
}

export async function prepareImage(bytes: Buffer, publicBase: string): Promise<PreparedImage> {
  const { contentType, extension } = await sniffImage(bytes);
  const id = newId('img');
  const storageKey = `${id}.${extension}`;
  return { id, url: `${publicBase}/media/${storageKey}`, storageKey, contentType, size: bytes.length };
}

/**
 * Records the image on its locked product and writes the file, last, inside the caller's
 * transaction: the file exists only once every check passed. Returns whether the file was
 * written, for the caller to remove it if the transaction then fails.
 */
export async function storeImage(
  trx: Transaction<DB>,
  media: MediaStorage,
  product: ProductRow,
  image: PreparedImage,
  bytes: Buffer,
  written: { file: boolean },
): Promise<ProductRow> {
  const updated = await appendImage(trx, product, image);
  await media.put(image.storageKey, bytes, image.contentType);
  written.file = true;
  return updated;
}
