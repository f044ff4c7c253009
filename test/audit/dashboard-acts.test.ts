import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { AuditAction } from '../../src/modules/audit/actions.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient } from '../dashboard/support.js';
import { earn, newPhone } from '../payouts/support.js';
import { createProduct } from '../products/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import { entriesOf, entryCount } from './support.js';

const D = '/dashboard';

/** A form's hidden fields with the entities the template wrote undone (a sealed value holds quotes). */
function formFields(html: string, action: string): Record<string, string> {
  const entities: Record<string, string> = { '&quot;': '"', '&#39;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' };
  return Object.fromEntries(
    Object.entries(hiddenFields(html, action)).map(([name, value]) => [
      name,
      value.replace(/&(quot|#39|lt|gt|amp);/g, (entity) => entities[entity]!),
    ]),
  );
}

/**
 * Issue 53 item 4: each act done in the dashboard writes one entry with the member as its actor
 * (their id and email), the session's mode, and the request's IP and user agent; the operator's
 * acts through the admin API write theirs with the operator as actor and no mode.
 */
describe('the audit log: acts through the dashboard and the operator API', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  let user: { id: string; email: string };
  let sk: string;

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    business = await t.createBusiness({ approveLive: false });
    sk = business.keys.secretTest;
    ({ client: owner, user } = await signedIn(t, business.id));
  });
  afterAll(() => t?.close());

  /** The one entry of an act on a target, checked for the member as actor. */
  async function onlyEntry(action: AuditAction, targetId: string, environment: 'test' | null = 'test') {
    const entries = (await entriesOf(t, business.id, action)).filter((entry) => entry.target_id === targetId);
    assert.equal(entries.length, 1, `${action} on ${targetId}: ${entries.length} entries`);
    const entry = entries[0]!;
    assert.deepEqual([entry.actor_kind, entry.actor_id, entry.actor_label], ['user', user.id, user.email]);
    assert.equal(entry.environment, environment);
    assert.ok(entry.ip);
    return entry;
  }

  test('webhook endpoints: created, events changed, disabled, secret rotated', async () => {
    const webhooks = `${D}/developers/webhooks`;
    const created = await owner.submit(webhooks, webhooks, {
      url: 'http://127.0.0.1:9/dash',
      events: 'payment.confirmed',
    });
    assert.equal(created.status, 200, created.html.slice(0, 300));
    const { id } = await t.runtime.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('business_id', '=', business.id)
      .where('url', '=', 'http://127.0.0.1:9/dash')
      .executeTakeFirstOrThrow();
    const entry = await onlyEntry('webhook_endpoint.created', id);
    assert.deepEqual(entry.details, { events: ['payment.confirmed'], url: 'http://127.0.0.1:9/dash' });
    const path = `${webhooks}/${id}`;
    assert.equal((await owner.submit(path, path, { events: ['payment.confirmed', 'payment.failed'] })).status, 303);
    assert.equal((await owner.submit(path, `${path}/disable`)).status, 303);
    const updates = (await entriesOf(t, business.id, 'webhook_endpoint.updated')).map((e) => e.details);
    assert.deepEqual(updates, [{ changed: ['events'] }, { active: false }]);
    const rotated = await owner.submit(path, `${path}/rotate`);
    assert.equal(rotated.status, 200);
    const rotation = await onlyEntry('webhook_endpoint.secret_rotated', id);
    assert.deepEqual(rotation.details, {});
  });

  test('a refund of a payment and of an order', async () => {
    const reference = await earn(t, sk, 10_000);
    const payment = `${D}/payments/${reference}`;
    assert.equal((await owner.submit(payment, `${payment}/refund`, { amount: '20' })).status, 303);
    const entry = await onlyEntry('refund.created', reference);
    assert.equal(entry.target_kind, 'payment_intent');
    assert.equal(entry.details.amount, 2_000);

    const product = await createProduct(t, sk, { name: 'Audit tea', price: 1_000, status: 'ACTIVE', quantity: 10 });
    const placed = await simulate(t, sk, [{ productId: product.id, quantity: 2 }], freshPhone());
    expectStatus(placed, 201);
    const ref = placed.body.data.referenceNumber;
    expectStatus(await orderAction(t, sk, `/${ref}/accept`), 200);
    const order = `${D}/orders/${ref}`;
    assert.equal((await owner.submit(order, `${order}/refund`, { amount: '5', reason: 'torn bag' })).status, 303);
    const orderEntry = await onlyEntry('refund.created', ref);
    assert.equal(orderEntry.target_kind, 'order');
    assert.equal(orderEntry.details.amount, 500);
    // The API's order refund: the key as actor.
    expectStatus(await orderAction(t, sk, `/${ref}/refund`, { amount: 300 }), 200);
    const both = (await entriesOf(t, business.id, 'refund.created')).filter((e) => e.target_id === ref);
    assert.deepEqual(
      both.map((e) => [e.actor_kind, e.details.amount]),
      [
        ['user', 500],
        ['api_key', 300],
      ],
    );
  });

  test('a payout created (review, confirm) and cancelled', async () => {
    await earn(t, sk, 100_000);
    const form = await owner.get(`${D}/payouts/new`);
    const review = `${D}/payouts/review`;
    const reviewed = await owner.post(review, { ...hiddenFields(form.html, review), amount: '10', phone: newPhone() });
    assert.equal(reviewed.status, 200, reviewed.html.slice(0, 300));
    const confirmed = await owner.post(`${D}/payouts`, formFields(reviewed.html, `${D}/payouts`));
    assert.equal(confirmed.status, 303, confirmed.html.slice(0, 300));
    const reference = /PO-[0-9]{16}/.exec(confirmed.location ?? '')?.[0];
    assert.ok(reference);
    assert.equal((await onlyEntry('payout.created', reference)).details.amount, 1_000);
    const page = `${D}/payouts/${reference}`;
    assert.equal((await owner.submit(page, `${page}/cancel`)).status, 303);
    await onlyEntry('payout.cancelled', reference);
  });

  test('a seller created and updated; a link created, deactivated and reactivated', async () => {
    const created = await owner.submit(`${D}/sellers/new`, `${D}/sellers`, {
      name: 'Stall 7',
      phone: '36000007',
      commission: '5',
    });
    assert.equal(created.status, 303, created.html.slice(0, 300));
    const id = /SL-[0-9A-Za-z]+/.exec(created.location ?? '')?.[0];
    assert.ok(id);
    await onlyEntry('seller.created', id);
    const path = `${D}/sellers/${id}`;
    const edited = await owner.submit(path, path, {
      name: 'Stall 7b',
      phone: '36000007',
      commission: '5',
      status: 'ACTIVE',
    });
    assert.equal(edited.status, 303, edited.html.slice(0, 300));
    assert.deepEqual((await onlyEntry('seller.updated', id)).details, { changed: ['name'] });

    const made = await owner.submit(`${D}/links/new`, `${D}/links`, {
      label: 'Bread',
      amountType: 'FIXED',
      amount: '40',
    });
    assert.equal(made.status, 303, made.html.slice(0, 300));
    const ref = /PL-[0-9A-Za-z]+/.exec(made.location ?? '')?.[0];
    assert.ok(ref);
    await onlyEntry('payment_link.created', ref);
    const link = `${D}/links/${ref}`;
    assert.equal((await owner.submit(link, `${link}/deactivate`, { inactiveMessage: 'Sold out' })).status, 303);
    assert.equal((await owner.submit(link, `${link}/reactivate`)).status, 303);
    const updates = (await entriesOf(t, business.id, 'payment_link.updated')).map((e) => e.details);
    assert.deepEqual(updates, [{ changed: ['active', 'inactiveMessage'] }, { changed: ['active'] }]);
  });

  test('settings, shop contact and live access: entries of no mode, the values left out', async () => {
    const settings = `${D}/settings`;
    assert.equal((await owner.submit(settings, `${settings}/business`, { name: 'Audit shop' })).status, 303);
    assert.deepEqual((await onlyEntry('settings.updated', business.id, null)).details, { changed: ['name'] });
    const contact = { phone: '22 12 34 56', email: 'shop@example.com', pickupAddress: '', delivers: 'yes' };
    assert.equal((await owner.submit(settings, `${settings}/contact`, contact)).status, 303);
    const entry = await onlyEntry('shop_contact.updated', business.id, null);
    assert.deepEqual(entry.details, { changed: ['phone', 'email', 'delivers'] });
    assert.doesNotMatch(JSON.stringify(entry), /shop@example\.com|22123456/);
    assert.equal((await owner.submit(settings, `${settings}/live-access`)).status, 303);
    await onlyEntry('live_access.requested', business.id, null);
  });

  test("a refused form writes nothing: a viewer's, and one the service refuses", async () => {
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    // After the viewer joined and signed in (their own entries): the refusals add none.
    const before = await entryCount(t, business.id);
    const page = await owner.get(`${D}/settings`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await viewer.get(`${D}/settings`)).html)?.[1];
    assert.ok(page.status === 200 && csrf);
    const refused = await viewer.post(`${D}/settings/business`, {
      _csrf: csrf,
      _idem: 'abcdefghijklmnop1234',
      name: 'Hijacked',
    });
    assert.equal(refused.status, 403);
    const empty = await owner.submit(`${D}/settings`, `${D}/settings/business`, { name: '   ' });
    assert.notEqual(empty.status, 500);
    assert.equal(await entryCount(t, business.id), before);
  });

  test("the operator's acts: fees changed, live approved, API suspended and reinstated", async () => {
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 150, revenueModel: 'COMMISSION' }),
      200,
    );
    expectStatus(
      await t.admin('POST', `/businesses/${business.id}/approve-live`, { verifiedName: 'Audit Shop SARL' }),
      200,
    );
    expectStatus(await t.admin('POST', '/api/disable', { businessId: business.id }), 200);
    expectStatus(await t.admin('POST', '/api/enable', { businessId: business.id }), 200);
    // The platform-wide switch is no act on one business: no entry.
    expectStatus(await t.admin('POST', '/api/disable', {}), 200);
    expectStatus(await t.admin('POST', '/api/enable', {}), 200);
    const operator = await t.runtime.db
      .selectFrom('audit_log')
      .selectAll()
      .where('business_id', '=', business.id)
      .where('actor_kind', '=', 'operator')
      .where('action', 'like', 'business.%')
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      operator.map((e) => [e.action, e.environment, e.actor_label, e.target_kind, e.target_id]),
      [
        ['business.fees_changed', null, 'operator', 'business', business.id],
        ['business.live_approved', null, 'operator', 'business', business.id],
        ['business.suspended', null, 'operator', 'business', business.id],
        ['business.reinstated', null, 'operator', 'business', business.id],
      ],
    );
    assert.deepEqual(operator[0]!.details, {
      changed: ['providerBps', 'revenueModel'],
      providerBps: 150,
      revenueModel: 'COMMISSION',
    });
    assert.deepEqual(operator[1]!.details, { verifiedName: 'Audit Shop SARL' });
    // An unknown business: 404, and nothing written anywhere.
    const total = await t.runtime.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal((await t.admin('PUT', '/businesses/biz_nobody/fees', { providerBps: 150 })).status, 404);
    assert.equal((await t.admin('POST', '/api/disable', { businessId: 'biz_nobody' })).status, 404);
    const after = await t.runtime.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(after.n, total.n);
  });
});
