import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { adminTokenFile } from '../lib/admin-token-file.js';

/** A problem the operator fixes (a setting, a missing file): the CLI prints it without a stack. */
export class ConnectionError extends Error {}

/** Where the CLI sends its requests, with what token, and where each came from (for messages). */
export interface AdminConnection {
  baseUrl: string;
  token: string;
  /** How the operator starts the server this URL points at, named in "cannot reach" messages. */
  startHint: string;
}

/** Addresses a server listens on for every interface: the CLI reaches it on this machine. */
const ANY_HOST = new Set(['0.0.0.0', '::']);

/**
 * The server's own address as `npm start` would listen in this checkout: the same PORT and HOST,
 * with their defaults from the one config module. IPv4 loopback for the wildcard, because a
 * 0.0.0.0 listener (like the default, 127.0.0.1) does not answer on ::1, where `localhost` may
 * resolve first.
 */
function serverUrl(config: Config): string {
  const host = ANY_HOST.has(config.host) ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/**
 * Reads the settings the server reads (PORT, HOST, DATA_DIR, ADMIN_TOKEN, with the same defaults),
 * so that with nothing exported the CLI finds the server `npm start` runs in the same checkout.
 * ADMIN_URL still points it elsewhere. Never writes: a missing token file is the server's to create.
 */
export function resolveConnection(env: NodeJS.ProcessEnv): AdminConnection {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConnectionError(error.message);
    throw error;
  }
  const adminUrl = env.ADMIN_URL?.replace(/\/+$/, '');
  const baseUrl = adminUrl || serverUrl(config);
  const startHint = adminUrl
    ? 'Is the server at ADMIN_URL running?'
    : `Is the server running? Start it in this checkout with \`npm start\` (it listens on port ${config.port}; ` +
      'run the CLI with the same PORT, HOST and DATA_DIR as the server, or set ADMIN_URL).';
  if (config.adminToken) return { baseUrl, token: config.adminToken, startHint };
  const file = path.resolve(adminTokenFile(config.dataDir));
  if (!existsSync(file)) {
    throw new ConnectionError(
      `No admin token: ${file} does not exist (DATA_DIR=${config.dataDir}). The server writes it on its ` +
        'first start: run `npm start` in this checkout once, use the DATA_DIR the server uses, or set ADMIN_TOKEN.',
    );
  }
  return { baseUrl, token: readFileSync(file, 'utf8').trim(), startHint };
}
