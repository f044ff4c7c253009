import { DOWNLOAD_LIMITS_DESCRIPTION } from '../../http/downloads.js';
import type { OperationDocs } from '../../http/openapi.js';

const PRODUCT_CODES = ['PRODUCT_NOT_FOUND', 'SHOP_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;
/** A `seller` given to a product (decision 081): answered as an intent's split answers. */
const SELLER_CODES = ['SELLER_NOT_FOUND', 'SELLER_DISABLED', 'SANDBOX_MISMATCH'] as const;

/** The docs of the product routes (routes.ts), by operation. */
export const productDocs = {
  createProduct: {
    schema: {
      operationId: 'createProduct',
      summary: 'Create a product',
      description: 'Adds a product to the shop; DISABLED unless `status` says otherwise.',
    },
    config: {
      errorCodes: ['SHOP_NOT_FOUND', 'EXTERNAL_ID_TAKEN', 'VARIANT_LABEL_AMBIGUOUS', ...SELLER_CODES],
      openapi: {
        requestExample: { name: 'Mint tea 250 g', price: 45000, externalId: 'TEA-250', quantity: 40, status: 'ACTIVE' },
      },
    },
  },
  listProducts: {
    schema: {
      operationId: 'listProducts',
      summary: 'List products',
      description: 'Paginated; search by name, filter by status and category, sort by date or price.',
    },
    config: { errorCodes: ['SHOP_NOT_FOUND'] },
  },
  retrieveProduct: {
    schema: {
      operationId: 'retrieveProduct',
      summary: 'Retrieve a product',
      description:
        '`{id}` is the product id or its `externalId` (up to 256 characters, percent-encoded). ExternalIds are stored in Unicode NFC and compared in it, so both spellings of an accented letter find the product.',
    },
    config: { errorCodes: PRODUCT_CODES },
  },
  replaceProduct: {
    schema: {
      operationId: 'replaceProduct',
      summary: 'Replace a product',
      description: 'Full replace: fields not sent take their defaults.',
    },
    config: {
      errorCodes: [
        ...PRODUCT_CODES,
        'EXTERNAL_ID_TAKEN',
        'VARIANT_NOT_FOUND',
        'VARIANT_LABEL_AMBIGUOUS',
        'SELLER_NOT_FOUND',
        'SELLER_DISABLED',
      ],
      openapi: { requestExample: { name: 'Mint tea 250 g', price: 47000, status: 'ACTIVE' } },
    },
  },
  updateProduct: {
    schema: { operationId: 'updateProduct', summary: 'Update a product', description: 'Only the fields sent change.' },
    config: {
      errorCodes: [
        ...PRODUCT_CODES,
        'EXTERNAL_ID_TAKEN',
        'VARIANT_NOT_FOUND',
        'VARIANT_LABEL_AMBIGUOUS',
        'SELLER_NOT_FOUND',
        'SELLER_DISABLED',
      ],
      openapi: { requestExample: { price: 47000 } },
    },
  },
  deleteProduct: {
    schema: {
      operationId: 'deleteProduct',
      summary: 'Delete a product',
      description: 'Removes the product and its images.',
    },
    config: { errorCodes: PRODUCT_CODES },
  },
  uploadProductImage: {
    schema: {
      operationId: 'uploadProductImage',
      summary: 'Upload a product image',
      description: 'Multipart form with one JPEG, PNG or WebP file (5 MB at most) in the field `file`.',
    },
    config: {
      errorCodes: [...PRODUCT_CODES, 'NO_FILE', 'INVALID_FILE_TYPE', 'FILE_TOO_LARGE'],
      openapi: { upload: 'a JPEG, PNG or WebP image, 5 MB at most' },
    },
  },
  updateProductInventory: {
    schema: {
      operationId: 'updateProductInventory',
      summary: 'Set or adjust stock',
      description:
        'Sets the quantity or adds a delta, for the product or one variant. Sends `product.stock_low` / `product.stock_out` on crossing.',
    },
    config: {
      errorCodes: [...PRODUCT_CODES, 'VARIANT_NOT_FOUND', 'VARIANT_LABEL_AMBIGUOUS', 'INSUFFICIENT_STOCK'],
      openapi: { requestExample: { delta: -2 }, bodyRequired: true },
    },
  },
  updateInventoryBatch: {
    schema: {
      operationId: 'updateInventoryBatch',
      summary: 'Update stock in bulk',
      description: 'Several stock changes in one all-or-nothing request.',
    },
    config: { errorCodes: [...PRODUCT_CODES, 'VARIANT_NOT_FOUND', 'VARIANT_LABEL_AMBIGUOUS', 'INSUFFICIENT_STOCK'] },
  },
  importProducts: {
    schema: {
      operationId: 'importProducts',
      summary: 'Import products from CSV',
      description:
        "Multipart form with a CSV file in the field `file`; rows upsert by `externalId`. A row with an `id` (the export's last column) updates that product instead, so products without an `externalId` import again. The `seller` column (SL-..., blank for none) gives the product to a seller: a row giving a seller the product does not have yet fails as `PUT` would, its code (`SELLER_NOT_FOUND`, `SANDBOX_MISMATCH`, `SELLER_DISABLED`) in `errors`.",
    },
    config: {
      errorCodes: ['SHOP_NOT_FOUND', 'NO_FILE', 'FILE_TOO_LARGE', 'CSV_INVALID'],
      openapi: { upload: 'a CSV file in the export format' },
    },
  },
  exportProducts: {
    schema: {
      operationId: 'exportProducts',
      summary: 'Export products as CSV',
      description: `The shop's products that the list's filters take (\`search\`, \`status\`, \`categoryId\`; every product without them), oldest first, in the import format, with its \`id\` as the last column. Streamed; ${DOWNLOAD_LIMITS_DESCRIPTION}`,
    },
    config: { errorCodes: ['SHOP_NOT_FOUND', 'TOO_MANY_DOWNLOADS'], openapi: { csv: true } },
  },
} satisfies Record<string, OperationDocs>;
