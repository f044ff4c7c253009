import { Type } from 'typebox';
import { ApiError, invalid } from './errors.js';

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_VALUE_LENGTH = 500;
/** Not in the contract: Stripe's key limit, so a key stays a key and not a second value. */
export const METADATA_MAX_KEY_LENGTH = 40;

/** `metadata` as every schema of the API writes it (intents, links, payouts, sellers): one wording. */
export const Metadata = Type.Record(Type.String(), Type.String(), {
  description: 'String values only; at most 50 keys of 1 to 40 characters, values up to 500 characters',
});

/**
 * What the schema cannot say of `metadata` (api.md 2.4): keys of 1 to 40 characters, at most 50
 * of them, values of at most 500 characters. `field` names it in errors (`body.items.3.metadata`).
 */
export function checkMetadata(metadata: Record<string, string>, field = 'body.metadata'): void {
  const keys = Object.keys(metadata);
  const badKey = keys.find((key) => key.length < 1 || key.length > METADATA_MAX_KEY_LENGTH);
  if (badKey !== undefined) {
    throw invalid(`${field}.${badKey}`, `key must be 1 to ${METADATA_MAX_KEY_LENGTH} characters`);
  }
  if (keys.length > METADATA_MAX_KEYS) {
    const message = `may have at most ${METADATA_MAX_KEYS} keys`;
    throw new ApiError('METADATA_TOO_MANY_KEYS', `${field} ${message}.`, [{ field, message }]);
  }
  const tooLong = keys.find((key) => [...(metadata[key] ?? '')].length > METADATA_MAX_VALUE_LENGTH);
  if (tooLong !== undefined) {
    const message = `is longer than ${METADATA_MAX_VALUE_LENGTH} characters`;
    throw new ApiError('METADATA_VALUE_TOO_LONG', `${field}.${tooLong} ${message}.`, [
      { field: `${field}.${tooLong}`, message },
    ]);
  }
}
