/**
 * The product form: its fields as posted, read into the catalogue's input, and drawn back as text
 * (a stored product's, or a refused form's as typed) with blank rows to add variants and options.
 */
import { Type, type Static } from 'typebox';
import { invalid } from '../../../../http/errors.js';
import { readAmount, type Lang } from '../../../../lib/i18n.js';
import type { OptionInput, productView, ProductFields, VariantInput } from '../../../products/model.js';
import { fieldChecks, type FormFields } from '../../form-errors.js';
import { Token } from '../../write.js';
import type { ProductFormValues } from './view.js';

/** Blank rows drawn under a product's variants and options, to add some without JavaScript. */
export const BLANK_ROWS = 2;

/** Repeated fields (one per variant or option row) arrive as one string or an array. */
const Rows = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 102 })]));
export const ProductForm = Type.Object(
  {
    ...Token,
    name: Type.String({ maxLength: 200 }),
    price: Type.String({ maxLength: 20 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]),
    quantity: Type.Optional(Type.String({ maxLength: 12 })),
    sku: Type.Optional(Type.String({ maxLength: 300 })),
    /** The seller picker: a seller's id, or empty for none (the business's own). */
    seller: Type.Optional(Type.String({ maxLength: 64 })),
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
function money(field: string, text: string, signed: boolean, lang: Lang): number {
  const centimes = readAmount(text, lang, { signed });
  if (centimes === undefined) throw invalid(field, 'must be an amount in MRU, such as 250 or 250.50');
  return centimes;
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
export function fieldsFromForm(
  form: Form,
  lang: Lang,
): Pick<
  ProductFields,
  'name' | 'price' | 'description' | 'externalId' | 'status' | 'quantity' | 'variants' | 'options'
> &
  Partial<Pick<ProductFields, 'seller'>> {
  const checks = fieldChecks();
  const name = form.name.trim();
  if (name === '') checks.refuse('name', 'is required');
  const price = checks.read(() => money('price', form.price, false, lang), 0);
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
        adjustment === ''
          ? 0
          : checks.read(() => money(`variants.${index}.priceAdjustment`, adjustment, true, lang), 0),
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
        adjustment === '' ? 0 : checks.read(() => money(`options.${index}.priceAdjustment`, adjustment, true, lang), 0),
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
    // A form without the picker (an older page) leaves the seller as it is.
    ...(form.seller === undefined ? {} : { seller: form.seller.trim() || null }),
  };
}

/** An amount in centimes as the form shows it: "250.00", "-5.00". */
export function mruText(centimes: number): string {
  return `${centimes < 0 ? '-' : ''}${(Math.abs(centimes) / 100).toFixed(2)}`;
}

const blankVariant = () => ({ id: '', type: '', label: '', adjustment: '', quantity: '' });
const blankOption = () => ({ id: '', name: '', adjustment: '' });

/** The form of a stored product (or of a new one). */
export function storedValues(product: ReturnType<typeof productView> | null): ProductFormValues {
  return {
    name: product?.name ?? '',
    price: product ? mruText(product.price) : '',
    description: product?.description ?? '',
    status: product?.status ?? 'ACTIVE',
    quantity: product?.quantity == null ? '' : String(product.quantity),
    sku: product?.externalId ?? '',
    seller: product?.seller ?? '',
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
export function postedValues(form: Form): ProductFormValues {
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
    seller: form.seller ?? '',
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
export const PRODUCT_FIELDS: FormFields<'products'> = {
  fields: [
    { pattern: /^name$/, text: 'fieldRequired' },
    { pattern: /^price$/, text: 'fieldAmount' },
    { pattern: /^quantity$/, text: 'fieldWholeNumber' },
    { pattern: /^(sku|externalId)$/, text: 'fieldSku', as: 'sku' },
    { pattern: /^(variants|options)\.\d+\.priceAdjustment$/, text: 'fieldAmount' },
    { pattern: /^variants\.\d+\.quantity$/, text: 'fieldWholeNumber' },
    { pattern: /^confirm$/, text: 'fieldRequired' },
  ],
  codes: {
    EXTERNAL_ID_TAKEN: { field: 'sku', text: 'fieldSku' },
    SELLER_NOT_FOUND: { field: 'seller', text: 'fieldSeller' },
    SELLER_DISABLED: { field: 'seller', text: 'fieldSeller' },
  },
};
