import { getCountries, getCountryCallingCode } from 'libphonenumber-js';

/** E.164: `+`, a country code that does not start with 0, 8 to 15 digits in all. */
export const E164_PATTERN = '^\\+[1-9][0-9]{7,14}$';

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
