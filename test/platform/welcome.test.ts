/**
 * `GET /`: the server's root answers what it is and where to go, as HTML (the project's eta views,
 * under a nonce CSP) or, when asked, as JSON with the same links; each link leads somewhere.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { seedDemoBusiness } from '../../src/bootstrap.js';
import { PRODUCT_NAME } from '../../src/http/docs-page.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';

const PAGES = ['/dashboard', '/dashboard/login', '/docs', '/api/v1/dev/openapi.json', '/health', '/ready'];

function hrefs(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)"/g)].map((match) => match[1]!);
}

describe('the root page', () => {
  let t: TestApp;
  let demoShopId: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { SEED_DEMO: 'true' } });
    const demo = await seedDemoBusiness(t.runtime);
    assert.ok(demo?.shop);
    demoShopId = demo.shop.id;
    // A merchant taking the demo's name is not the demo.
    await t.createBusiness({ name: 'Demo Shop' });
    await t.createBusiness({ name: 'Another shop' });
  });
  afterAll(() => t.close());

  test('a browser gets an HTML page linking the dashboard, the API docs, the storefronts and the health checks', async () => {
    const response = await t.request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expectStatus(response, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(response.text, /^<!doctype html>/);
    assert.match(response.text, /<h1>Commerce Developer API<\/h1>/);
    const links = hrefs(response.text);
    for (const page of [...PAGES, `/s/${demoShopId}`]) assert.ok(links.includes(page), `${page} in ${links.join(' ')}`);
    assert.match(response.text, /<code>\/s\/\{shopId\}<\/code>/);
    // Every link answers (redirects followed), none is a JSON 404.
    for (const link of new Set(links)) {
      const followed = await t.request('GET', link);
      assert.ok(followed.status < 400, `${link}: ${followed.status}`);
    }
  });

  test('the page runs under its own nonce CSP and the usual security headers', async () => {
    const response = await t.request('GET', '/');
    const csp = response.headers.get('content-security-policy') ?? '';
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.ok(response.text.includes(`<style nonce="${nonce}">`));
    assert.doesNotMatch(response.text, /<script/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    assert.equal(response.headers.get('vary'), 'Accept');
    const again = await t.request('GET', '/');
    assert.notEqual(again.headers.get('content-security-policy'), csp, 'a fresh nonce per response');
  });

  test('a client asking for JSON gets the same links as a small JSON object', async () => {
    const response = await t.request('GET', '/', { headers: { accept: 'application/json' } });
    expectStatus(response, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(response.body, {
      success: true,
      data: {
        name: 'Commerce Developer API',
        links: {
          dashboard: '/dashboard',
          dashboardLogin: '/dashboard/login',
          apiDocs: '/docs',
          openapi: '/api/v1/dev/openapi.json',
          apiBase: '/api/v1/dev',
          storefront: '/s/{shopId}',
          demoStorefront: `/s/${demoShopId}`,
          health: '/health',
          ready: '/ready',
        },
      },
    });
    const html = await t.request('GET', '/', { headers: { accept: 'text/html' } });
    const htmlLinks = hrefs(html.text);
    for (const link of Object.values(response.body.data.links as Record<string, string | null>))
      if (link && !link.includes('{') && link !== '/api/v1/dev') assert.ok(htmlLinks.includes(link), link);
  });

  test("/docs carries the product's name and a plain top bar, not Swagger's title and the Fastify logo", async () => {
    const page = await t.request('GET', '/docs', { headers: { accept: 'text/html' } });
    expectStatus(page, 200);
    assert.match(page.text, new RegExp(`<title>${PRODUCT_NAME}: reference</title>`));
    assert.doesNotMatch(page.text, /<title>Swagger UI<\/title>|favicon-32x32\.png/);
    const css = /<link rel="stylesheet" type="text\/css" href="(\/docs\/static\/theme\/[^"]+\.css)"/.exec(
      page.text,
    )?.[1];
    assert.ok(css, page.text);
    expectStatus(await t.request('GET', css), 200);
    // The top bar's logo: the swagger-ui default is the Fastify logo, an SVG with "fastify" in it.
    const script = await t.request('GET', '/docs/static/swagger-initializer.js');
    expectStatus(script, 200);
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(script.text)?.[1];
    assert.ok(logo, script.text);
    const svg = Buffer.from(logo, 'base64').toString('utf8');
    assert.ok(svg.includes(`>${PRODUCT_NAME}</text>`), svg);
    assert.doesNotMatch(svg, /fastify/i);
    const json = await t.request('GET', '/', { headers: { accept: 'application/json' } });
    assert.equal(json.body.data.name, PRODUCT_NAME);
  });

  test('curl (*/*) and a client without Accept get the page', async () => {
    for (const headers of [{ accept: '*/*' }, {}] as Record<string, string>[]) {
      const response = await t.request('GET', '/', { headers });
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    }
  });
});

describe('the root page without a demo business', () => {
  test('explains where a storefront is instead of linking one', async () => {
    // Demos off, or on but the first business a merchant's: a business named "Demo Shop" is not linked.
    for (const seedDemo of ['false', 'true']) {
      const t = await startTestApp({ config: { SEED_DEMO: seedDemo } });
      try {
        await t.createBusiness({ name: 'Demo Shop' });
        const json = await t.request('GET', '/', { headers: { accept: 'application/json' } });
        assert.equal(json.body.data.links.demoStorefront, null, seedDemo);
        const html = await t.request('GET', '/');
        assert.ok(!hrefs(html.text).some((link) => link.startsWith('/s/')), html.text);
        assert.match(html.text, /npm run admin -- business create/);
        assert.equal(await seedDemoBusiness(t.runtime), null, 'a first start only seeds an empty database');
      } finally {
        await t.close();
      }
    }
  });

  test('the demo keeps its link when its owner renames it', async () => {
    const t = await startTestApp({ config: { SEED_DEMO: 'true' } });
    try {
      const demo = await seedDemoBusiness(t.runtime);
      await t.runtime.db
        .updateTable('businesses')
        .set({ name: 'Chez Aminata' })
        .where('id', '=', demo!.business.id)
        .execute();
      await t.createBusiness({ name: 'Demo Shop' });
      const json = await t.request('GET', '/', { headers: { accept: 'application/json' } });
      assert.equal(json.body.data.links.demoStorefront, `/s/${demo!.shop!.id}`);
    } finally {
      await t.close();
    }
  });
});
