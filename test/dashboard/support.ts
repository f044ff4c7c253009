import assert from 'node:assert/strict';
import type { DashboardRole } from '../../src/db/schema.js';
import type { TestApp } from '../support/harness.js';

export const PASSWORD = 'correct horse battery';

export interface Page {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

/** A browser without JavaScript: keeps cookies, posts urlencoded forms, follows nothing by itself. */
export class FormClient {
  readonly cookies = new Map<string, string>();

  constructor(
    // Only the address: a client of a server started outside the harness takes `{ baseUrl }`.
    private readonly t: Pick<TestApp, 'baseUrl'>,
    private readonly headers: Record<string, string> = {},
  ) {}

  private remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: string, path: string, form?: Record<string, string | string[]>): Promise<Page> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(form)) {
        for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
      }
      body = params.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(`${this.t.baseUrl}${path}`, {
      method,
      headers,
      redirect: 'manual',
      ...(body !== undefined ? { body } : {}),
    });
    this.remember(response);
    return {
      status: response.status,
      location: response.headers.get('location'),
      html: await response.text(),
      headers: response.headers,
    };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string | string[]>) {
    return this.request('POST', path, form);
  }

  /** Opens the sign-in page and posts the form as a browser would. */
  async signIn(email: string, password: string, extra: Record<string, string> = {}): Promise<Page> {
    const page = await this.get('/dashboard/login');
    return this.post('/dashboard/login', { _csrf: field(page.html, '_csrf'), email, password, ...extra });
  }

  /** Posts the form found by its action on `pagePath`, with its hidden fields and `fields`. */
  async submit(pagePath: string, action: string, fields: Record<string, string | string[]> = {}): Promise<Page> {
    const page = await this.get(pagePath);
    assert.equal(page.status, 200, `GET ${pagePath}: ${page.status} ${page.html.slice(0, 500)}`);
    return this.post(action, { ...hiddenFields(page.html, action), ...fields });
  }
}

/** The value of the first input named `name`. */
export function field(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  assert(match, `no field ${name} in ${html.slice(0, 300)}`);
  return match[1]!;
}

/** The hidden inputs of the form posting to `action`. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  assert(start >= 0, `no form posting to ${action}`);
  const end = html.indexOf('</form>', start);
  const form = html.slice(start, end);
  const fields: Record<string, string> = {};
  for (const match of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[match[1]!] = match[2]!;
  return fields;
}

let userCounter = 0;

/** A dashboard user made through the operator API (what `admin user create` calls). */
export async function createUser(
  t: TestApp,
  businessId: string,
  role: DashboardRole = 'owner',
): Promise<{ id: string; email: string; password: string }> {
  const email = `user${++userCounter}-${process.pid}-${Date.now()}@example.com`;
  const response = await t.admin('POST', '/users', { businessId, email, password: PASSWORD, role });
  assert.equal(response.status, 201, response.text);
  return { id: response.body.data.id, email, password: PASSWORD };
}

/** A client signed in as a new user of `businessId`. */
export async function signedIn(t: TestApp, businessId: string, role: DashboardRole = 'owner') {
  const user = await createUser(t, businessId, role);
  const client = new FormClient(t);
  const answer = await client.signIn(user.email, user.password);
  assert.equal(answer.status, 303, answer.html.slice(0, 500));
  return { client, user };
}
