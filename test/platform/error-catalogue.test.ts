import assert from 'node:assert/strict';
import { test } from 'vitest';
import { errorCatalogue } from '../../src/http/errors.js';

/**
 * Every error code the contract names, with its HTTP status, copied by hand from the contract so
 * that this test needs nothing outside the repository: api.md section 7 (the error table), the
 * "New codes" table of decisions.md (Conventions), and the codes decisions.md gives in prose.
 */
const API_MD_SECTION_7: Record<string, number> = {
  MISSING_CREDENTIALS: 401,
  INVALID_AUTH_HEADER: 401,
  INVALID_API_KEY: 401,
  API_ACCESS_NOT_ACTIVE: 403,
  LIVE_ACCESS_NOT_APPROVED: 403,
  SECRET_KEY_REQUIRED: 403,
  SCOPE_REQUIRED: 403,
  IP_NOT_ALLOWED: 403,
  FEATURE_DISABLED: 503,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  SANDBOX_ONLY: 403,
  SANDBOX_MISMATCH: 403,
  INTENT_NOT_FOUND: 404,
  INTENT_NOT_PENDING: 400,
  INTENT_CANCEL_INVALID_STATUS: 400,
  INTENT_CANCEL_CONFLICT: 400,
  INTENT_REFUND_INVALID_STATUS: 400,
  AMOUNT_OUT_OF_RANGE: 400,
  METADATA_TOO_MANY_KEYS: 400,
  METADATA_VALUE_TOO_LONG: 400,
  NO_FILE: 400,
  INVALID_FILE_TYPE: 400,
  FILE_TOO_LARGE: 400,
  PRODUCT_NOT_FOUND: 404,
  SHOP_NOT_FOUND: 404,
  VARIANT_NOT_FOUND: 404,
  VARIANT_LABEL_AMBIGUOUS: 400,
  ENDPOINT_NOT_FOUND: 404,
  MAX_ENDPOINTS_REACHED: 400,
  EVENTS_NOT_PERMITTED: 403,
  INVALID_WEBHOOK_EVENT: 400,
  INVALID_WEBHOOK_URL: 400,
};

const DECISIONS_MD_TABLE: Record<string, number> = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_PROGRESS: 409,
  REFUND_AMOUNT_INVALID: 400,
  INSUFFICIENT_BALANCE: 402,
  INVALID_PIN: 401,
  WALLET_LOCKED: 403,
  WALLET_NOT_FOUND: 404,
  ORDER_NOT_FOUND: 404,
  ORDER_INVALID_TRANSITION: 400,
  DELIVERY_NOT_FOUND: 404,
  INSUFFICIENT_STOCK: 400,
  CSV_INVALID: 400,
};

/** decisions.md, in prose: "Payment intents" (all codes taken) and "Products" (externalId clash). */
const DECISIONS_MD_PROSE: Record<string, number> = {
  CODE_SPACE_EXHAUSTED: 503,
  EXTERNAL_ID_TAKEN: 409,
};

const catalogue = errorCatalogue as Record<string, { status: number; message: string }>;

for (const [source, table] of [
  ['api.md section 7', API_MD_SECTION_7],
  ['the decisions.md table', DECISIONS_MD_TABLE],
  ['decisions.md prose', DECISIONS_MD_PROSE],
] as const) {
  test(`every code of ${source} is in the catalogue with the contract's HTTP status`, () => {
    for (const [code, status] of Object.entries(table)) {
      const entry = catalogue[code];
      assert.ok(entry, `${code} is missing from the catalogue`);
      assert.equal(entry.status, status, `${code}: catalogue says ${entry.status}, contract says ${status}`);
    }
  });
}

test('the contract tables above are complete (32 codes in api.md section 7, 16 in decisions.md)', () => {
  assert.equal(Object.keys(API_MD_SECTION_7).length, 32);
  assert.equal(Object.keys(DECISIONS_MD_TABLE).length, 16);
});

test('every catalogue entry is an error status with a message', () => {
  for (const [code, entry] of Object.entries(catalogue)) {
    assert.match(code, /^[A-Z][A-Z_]+$/);
    assert.ok(entry.status >= 400 && entry.status <= 599, `${code}: ${entry.status}`);
    assert.ok(entry.message.length > 0, `${code} has no message`);
  }
});
