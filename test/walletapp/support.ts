import assert from 'node:assert/strict';
import { createIntent } from '../intents/support.js';
import { expectStatus, type TestApp } from '../support/harness.js';

/** A sandbox wallet that answers requests only in the wallet app (funded; not one of the answering phones). */
export const PAYER = { phone: '+22220000001', local: '20000001', pin: '1234' };

/** A browser's cookie jar for one wallet app user: the cookies the server set, sent back. */
export class Browser {
  cookies = new Map<string, string>();
  constructor(private readonly t: TestApp) {}

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; html: string; response: Response }> {
    const response = await fetch(`${this.t.baseUrl}${path}`, {
      headers: { cookie: this.cookieHeader(), ...headers },
      redirect: 'manual',
    });
    this.keep(response);
    return { status: response.status, html: await response.text(), response };
  }

  async post(
    path: string,
    form: Record<string, string>,
  ): Promise<{ status: number; html: string; response: Response }> {
    const response = await fetch(`${this.t.baseUrl}${path}`, {
      method: 'POST',
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
    this.keep(response);
    return { status: response.status, html: await response.text(), response };
  }

  /** The hidden `_csrf` of the page's first form. */
  static csrfOf(html: string): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(html);
    assert.ok(match, 'the page has a form with its CSRF token');
    return match[1]!;
  }

  /** Signs in from the sign-in page (test mode unless told otherwise); answers the POST. */
  async signIn(phone = PAYER.local, pin = PAYER.pin, mode: 'test' | 'live' = 'test') {
    const page = await this.get(`/wallet?mode=${mode}`);
    expectStatus({ status: page.status, text: page.html, headers: page.response.headers, body: undefined }, 200);
    return this.post('/wallet/sign-in', { _csrf: Browser.csrfOf(page.html), phone, pin, mode });
  }
}

/** An intent of `key`'s business, and a payment request of it to `phone`; answers the request. */
export async function requestPayment(
  t: TestApp,
  key: string,
  body: { phone: string; message?: string; expiresIn?: number } = { phone: PAYER.phone },
  amount = 5000,
): Promise<{ id: string; intent: string }> {
  const intent = await createIntent(t, key, { amount });
  const response = await t.request('POST', `/api/v1/dev/intents/${intent.referenceNumber}/requests`, {
    key,
    body,
    idempotencyKey: true,
  });
  expectStatus(response, 201);
  return response.body.data;
}
