import { randomBytes } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface CookieNames {
  session: string;
  login: string;
  secure: boolean;
}

/** `__Host-` names bind the cookies to this exact origin over HTTPS (no Domain, Path=/, Secure). */
export function cookieNames(publicUrl: string | undefined): CookieNames {
  const secure = publicUrl?.startsWith('https://') ?? false;
  return secure
    ? { session: '__Host-dashboard_session', login: '__Host-dashboard_login', secure }
    : { session: 'dashboard_session', login: 'dashboard_login', secure };
}

export function setCookie(reply: FastifyReply, names: CookieNames, name: string, value: string, maxAge?: number) {
  reply.header(
    'Set-Cookie',
    serializeCookie(name, value, {
      httpOnly: true,
      sameSite: 'lax',
      secure: names.secure,
      path: '/',
      ...(maxAge !== undefined ? { maxAge } : {}),
    }),
  );
}

export function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
  return parseCookies(request.headers.cookie ?? '');
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}
