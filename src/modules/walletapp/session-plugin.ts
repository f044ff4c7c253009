import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookiesOf, setCookie, type CookieNames } from '../dashboard/cookies.js';
import type { Executor } from '../../db/transaction.js';
import { findWalletSession, WALLET_SESSION, type WalletSession } from './sessions.js';

/** `__Host-` names bind the cookies to this exact origin over HTTPS (no Domain, Path=/, Secure). */
export function walletCookieNames(publicUrl: string | undefined): CookieNames {
  const secure = publicUrl?.startsWith('https://') ?? false;
  return secure
    ? { session: '__Host-wallet_session', login: '__Host-wallet_login', secure }
    : { session: 'wallet_session', login: 'wallet_login', secure };
}

/** The session cookie lives as long as a session may (the server ends idle ones sooner). */
export function setSessionCookie(reply: FastifyReply, names: CookieNames, token: string): void {
  setCookie(reply, names, names.session, token, WALLET_SESSION.maxHours * 3600);
}

export function clearCookie(reply: FastifyReply, names: CookieNames, name: string): void {
  setCookie(reply, names, name, '', 0);
}

/** The request's live wallet session, or undefined (an ended one's cookie is cleared). */
export async function sessionOf(
  db: Executor,
  names: CookieNames,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<WalletSession | undefined> {
  const token = cookiesOf(request)[names.session];
  if (!token) return undefined;
  const session = token.length <= 100 ? await findWalletSession(db, token) : undefined;
  if (!session) clearCookie(reply, names, names.session);
  return session;
}
