import { Type } from 'typebox';
import { literalUnion, Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import { AMOUNT_TYPES, PAYMENT_LINK_STATUSES } from '../../db/schema.js';
import { Centimes, Metadata } from '../intents/schemas.js';

export const LinkStatus = literalUnion(PAYMENT_LINK_STATUSES);

export const MAX_LINK_PAYMENTS = 1_000_000;
/**
 * A label's and an inactive message's most characters (code points, as the schema counts them).
 * The links service checks them too, so that the dashboard's forms, which post looser, meet the
 * same limits as the API.
 */
export const LABEL_MAX = 200;
export const INACTIVE_MESSAGE_MAX = 500;
const MaxPayments = Type.Integer({
  minimum: 1,
  maximum: MAX_LINK_PAYMENTS,
  description: 'How many payments the link takes before it is COMPLETED (1 to 1,000,000); none: no limit',
});
const ExpiresAt = Type.String({ format: 'date-time', description: 'ISO 8601; must be in the future' });

export const LinkParams = Type.Object({ referenceNumber: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreateLinkBody = Type.Object(
  {
    label: Type.String({
      minLength: 1,
      maxLength: LABEL_MAX,
      description: 'What is paid for, shown to the payer; trimmed, and not blank',
    }),
    amountType: literalUnion(AMOUNT_TYPES),
    amount: Type.Optional(Type.Integer({ description: 'FIXED links only: centimes, within the intent limits' })),
    minAmount: Type.Optional(Type.Integer({ description: 'OPEN links only: the least a payer may pay' })),
    maxAmount: Type.Optional(Type.Integer({ description: 'OPEN links only: the most a payer may pay' })),
    maxPayments: Type.Optional(MaxPayments),
    expiresAt: Type.Optional(ExpiresAt),
    collect: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.Boolean({ description: "Ask the payer's name (required on the page)" })),
          note: Type.Optional(Type.Boolean({ description: 'Offer the payer a note (optional on the page)' })),
        },
        { additionalProperties: false },
      ),
    ),
    successUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'http(s) URL the receipt leads to' })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const UpdateLinkBody = Type.Object(
  {
    label: Type.Optional(Type.String({ minLength: 1, maxLength: LABEL_MAX, description: 'Trimmed, and not blank' })),
    active: Type.Optional(Type.Boolean({ description: 'false deactivates the link; true reactivates it' })),
    inactiveMessage: Type.Optional(
      Nullable(
        Type.String({
          maxLength: INACTIVE_MESSAGE_MAX,
          description: 'What a payer reads on the link while it is inactive',
        }),
      ),
    ),
    maxPayments: Type.Optional(Nullable(MaxPayments)),
    expiresAt: Type.Optional(Nullable(ExpiresAt)),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const ListLinksQuery = Type.Object(
  { status: Type.Optional(LinkStatus), ...Pagination },
  { additionalProperties: false },
);

export const ListLinkIntentsQuery = Type.Object({ ...Pagination }, { additionalProperties: false });

export const PaymentLink = Type.Object(
  {
    referenceNumber: Type.String({ description: '`PL-` and 16 digits' }),
    url: Type.String({ description: 'The page payers open: `{pay_url}/l/{slug}`' }),
    qrUrl: Type.String({ description: "The link's QR code (SVG; `.png` beside it)" }),
    label: Type.String(),
    amountType: literalUnion(AMOUNT_TYPES),
    amount: Nullable(Centimes),
    minAmount: Nullable(Centimes),
    maxAmount: Nullable(Centimes),
    currency: Type.Literal('MRU'),
    maxPayments: Nullable(Type.Integer()),
    expiresAt: Nullable(Timestamp),
    collect: Type.Object({ name: Type.Boolean(), note: Type.Boolean() }),
    successUrl: Nullable(Type.String()),
    metadata: Metadata,
    status: LinkStatus,
    active: Type.Boolean(),
    inactiveMessage: Nullable(Type.String()),
    paymentsCount: Type.Integer({ description: 'Payments made through the link' }),
    amountCollected: Type.Integer({ description: 'Centimes paid through the link (refunds not deducted)' }),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'PaymentLink' },
);
