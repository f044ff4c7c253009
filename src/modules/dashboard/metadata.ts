import { invalid } from '../../http/errors.js';

/**
 * A form's metadata: one `key=value` per line, blank lines skipped, each side trimmed. The
 * one-time payment form and the new-link form read it so; the service then checks the limits.
 */
export function metadataLines(text: string | undefined): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const line of (text ?? '').split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    if (at < 1) throw invalid('metadata', 'must be one key=value per line');
    metadata[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return metadata;
}
