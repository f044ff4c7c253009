import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
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

  /** The hidden fields (`_csrf`, `_idem`) of the page's form that posts to `action` (its path; a `?lang=` may follow). */
  static formOf(html: string, action: string): Record<string, string> {
    const start = html.indexOf(`action="${action}`);
    assert.ok(start >= 0, `the page has a form posting to ${action}`);
    const form = html.slice(start, html.indexOf('</form>', start));
    const fields: Record<string, string> = {};
    for (const match of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields[match[1]!] = match[2]!;
    }
    assert.ok(fields._csrf && fields._idem, 'the form carries its CSRF token and its own key');
    return fields;
  }

  /** The page's CSRF token and a form token of its own, for a form the page does not draw (an unknown request). */
  static fields(html: string): { _csrf: string; _idem: string } {
    return { _csrf: Browser.csrfOf(html), _idem: randomBytes(18).toString('hex') };
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
