import { createHash } from 'node:crypto';

/**
 * Statement names by text, for every connection of the process: a Map lookup hashes a text once
 * per string (both drivers name statements this way), where a SHA-1 per call cost some 4 % of the API's JavaScript in a payment.
 */
const statementNames = new Map<string, string>();
const MAX_REMEMBERED_NAMES = 2_000;

export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `k_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    // Texts that vary with their input (IN lists, VALUES rows) must not grow the map without end.
    if (statementNames.size >= MAX_REMEMBERED_NAMES) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}
