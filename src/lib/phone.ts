import { getCountries, getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js';

/** E.164: `+`, a country code that does not start with 0, 8 to 15 digits in all. */
export const E164_PATTERN = '^\\+[1-9][0-9]{7,14}$';
const E164 = new RegExp(E164_PATTERN);

/**
 * What a customer's wallet phone field documents (decision 056): E.164, or a Mauritanian number's
 * 8 national digits. `readWalletPhoneOfBody` (http/validation.ts) reads the second as the first, or refuses it.
 */
export const WALLET_PHONE_PATTERN = '^(\\+[1-9][0-9]{7,14}|[0-9]{8})$';

const callingCodes = new Set<string>(getCountries().map((country) => getCountryCallingCode(country)));

/** The country calling code of an E.164 number (calling codes form a prefix-free set of 1-3 digits). */
export function countryCallingCode(phone: string): string | undefined {
  const digits = phone.slice(1);
  for (let length = 1; length <= 3; length++) {
    const prefix = digits.slice(0, length);
    if (callingCodes.has(prefix)) return prefix;
  }
  return undefined;
}

/**
 * decisions.md: keep `+`, the country code and the last 2 digits; every other digit becomes `*`
 * (`+22212345678` → `+222******78`). An unknown country code keeps only its first digit.
 */
export function maskPhone(phone: string): string {
  const digits = phone.slice(1);
  const kept = (countryCallingCode(phone) ?? digits.slice(0, 1)).length;
  const hidden = Math.max(0, digits.length - kept - 2);
  return `+${digits.slice(0, kept)}${'*'.repeat(hidden)}${digits.slice(kept + hidden)}`;
}

/** The country a wallet phone typed without `+` belongs to: Mauritania, whose numbers have 8 digits. */
export const HOME_COUNTRY = 'MR' as const;

/** A wallet phone as the pages' hints show one: a Mauritanian number as people write it (a sandbox wallet's). */
export const NATIONAL_PHONE_EXAMPLE = '20 00 00 01';

// What people put between digits when they write a phone number down.
const PHONE_PUNCTUATION = /[\s().\u00a0\u202f-]/g;

/**
 * A wallet phone as a customer types it, in E.164, or undefined when it is none. `+` (or `00`)
 * and a country code: any number of E.164's shape, as the API always took. Otherwise the digits
 * are read as a Mauritanian number (libphonenumber-js's national parsing, default country MR):
 * `20000001`, `20 00 00 01` and `222 20000001` all mean `+22220000001`; it must then be a valid
 * Mauritanian number, so a digit too many or too few is refused here rather than taken for a
 * wallet nobody has.
 */
export function walletPhone(typed: string): string | undefined {
  const compact = typed.replace(PHONE_PUNCTUATION, '');
  if (compact.length === 0 || compact.length > 20) return undefined;
  const international = compact.startsWith('+') ? compact : compact.startsWith('00') ? `+${compact.slice(2)}` : null;
  if (international !== null) return E164.test(international) ? international : undefined;
  if (!/^[0-9]+$/.test(compact)) return undefined;
  const parsed = parsePhoneNumberFromString(compact, HOME_COUNTRY);
  return parsed?.isValid() && E164.test(parsed.number) ? parsed.number : undefined;
}
