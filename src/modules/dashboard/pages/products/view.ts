import type { importProducts } from '../../../products/csv.js';
import type { productView } from '../../../products/model.js';
import type { FormState } from '../../view-types.js';

/** The product form's fields as text, the rows of variants and options followed by blank ones. */
export interface ProductFormValues {
  name: string;
  price: string;
  description: string;
  status: string;
  quantity: string;
  sku: string;
  /** The picked seller's id; empty: none. */
  seller: string;
  variants: { id: string; type: string; label: string; adjustment: string; quantity: string }[];
  options: { id: string; name: string; adjustment: string }[];
}

type Product = ReturnType<typeof productView>;
type Image = Product['images'][number];

/** What the Products pages' templates draw: the catalogue, a product and its form, and an import's report. */
export interface ProductViews {
  products: {
    /** Each product with its first image's address on this origin, if any. */
    products: (Product & { thumbnail: string | null })[];
    total: number;
    page: number;
    pages: number;
    filters: { q: string; status: string };
    filterQuery: string;
    maxImportRows: number;
  };
  product: FormState & {
    /** The stored product; none for a new one. */
    product: Product | null;
    images: (Image & { src: string })[];
    form: ProductFormValues;
    /** The seller picker's choices: the business's ACTIVE sellers, and the product's own even if disabled since. */
    sellers: { id: string; name: string }[];
  };
  'import-report': { report: Awaited<ReturnType<typeof importProducts>> };
}
