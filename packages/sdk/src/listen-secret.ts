import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigurationError } from './errors.js';
import { randomSecret } from './listen.js';

/**
 * The listen secret of each API key, kept in the user's config directory so a receiver started
 * with it keeps verifying across restarts of `commerce listen`. Keyed by a SHA-256 of the key:
 * the file must not become a second copy of the keys themselves.
 */

const FILE_NAME = 'listen.json';

interface StoredSecret {
  secret: string;
  createdAt: string;
}

interface ListenConfig {
  secrets: Record<string, StoredSecret>;
}

export interface ListenSecret {
  secret: string;
  /** True when this call made it (the only time the CLI prints it unasked). */
  created: boolean;
  file: string;
}

/**
 * `COMMERCE_CONFIG_DIR` (tests, several profiles), else `%APPDATA%\commerce` on Windows, else
 * `$XDG_CONFIG_HOME/commerce` or `~/.config/commerce` (the XDG spec ignores a relative value).
 */
export function configDir(
  env: Record<string, string | undefined> = process.env,
  platform: string = process.platform,
  home: string = os.homedir(),
): string {
  if (env.COMMERCE_CONFIG_DIR) return env.COMMERCE_CONFIG_DIR;
  if (platform === 'win32')
    return path.win32.join(env.APPDATA || path.win32.join(home, 'AppData', 'Roaming'), 'commerce');
  const xdg = env.XDG_CONFIG_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.config'), 'commerce');
}

export function keyId(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function isListenConfig(value: unknown): value is ListenConfig {
  if (typeof value !== 'object' || value === null) return false;
  const secrets = (value as { secrets?: unknown }).secrets;
  if (typeof secrets !== 'object' || secrets === null) return false;
  return Object.values(secrets).every((entry: unknown) => typeof (entry as StoredSecret | null)?.secret === 'string');
}

function readConfig(file: string): ListenConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { secrets: {} };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // Never rewrite a file we cannot read: that would silently change every receiver's secret.
  if (!isListenConfig(parsed)) {
    throw new ConfigurationError({
      code: 'LISTEN_CONFIG_UNREADABLE',
      message: `${file} is not a listen secrets file; fix it, or delete it to get new secrets.`,
    });
  }
  return parsed;
}

/**
 * Written beside and renamed over, so a reader never sees half a file; 0600 as it holds secrets.
 * The temporary file has a name nobody can guess and is created only where nothing is (`wx`:
 * O_CREAT | O_EXCL, which refuses a symbolic link planted at the name instead of following it), so
 * another user of a shared directory cannot make this write land in a file of their choosing.
 * The rename replaces `file` itself, never what a link there points to.
 */
function writeConfig(file: string, config: ListenConfig): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(12).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** The key's listen secret, made and stored on first use. */
export function listenSecretFor(apiKey: string, dir: string = configDir()): ListenSecret {
  const file = path.join(dir, FILE_NAME);
  const config = readConfig(file);
  const id = keyId(apiKey);
  const stored = config.secrets[id];
  if (stored) return { secret: stored.secret, created: false, file };
  const secret = randomSecret();
  config.secrets[id] = { secret, createdAt: new Date().toISOString() };
  writeConfig(file, config);
  return { secret, created: true, file };
}
