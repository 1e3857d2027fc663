import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_PATHS } from '../src/plugins/dashboard-pages.ts';
import { useTestApp } from './helpers/app.ts';
import { REPO_ROOT } from './helpers/processes.ts';

// The dashboard's files as the server sends them (src/plugins/dashboard-pages.ts), from the
// dist/web the suite's global setup has just built: every page path answers the same index.html
// under a strict CSP; the hashed assets are cached for a year and compressed when accepted.

const WEB = join(REPO_ROOT, 'dist', 'web');
const index = () => readFileSync(join(WEB, 'index.html'), 'utf8');

describe('dashboard pages', () => {
  const t = useTestApp('sqlite');

  it('answers index.html on every page path, without a credential, never cached without revalidation', async () => {
    const paths = DASHBOARD_PATHS.map((path) => path.replace('*', '65f1c0ffee0ddba11ad0be75/settings').replace(':websiteId', '65f1c0ffee0ddba11ad0be75'));
    for (const path of [...paths, '/websites/65f1c0ffee0ddba11ad0be75', '/account/tokens']) {
      const response = await t.request('GET', path, { headers: { accept: 'text/html' } });
      expect(response.status, path).toBe(200);
      expect(String(response.headers['content-type']), path).toMatch(/^text\/html; charset=utf-8/);
      expect(response.raw, path).toBe(index());
      expect(response.headers['cache-control'], path).toBe('no-cache');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('same-origin');
      const csp = String(response.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-eval');
    }
  });

  it('answers 304 to a revalidation of an unchanged index.html', async () => {
    const first = await t.request('GET', '/websites');
    const again = await t.request('GET', '/websites', { headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
  });

  it('names a viewport, a language, a title and the hashed entry in index.html', () => {
    const html = index();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<meta name="viewport"');
    expect(html).toMatch(/<title>[^<]+<\/title>/);
    expect(html).toContain('<noscript>');
    expect(html).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    expect(html).toMatch(/<link rel="stylesheet" href="\/assets\/main-[A-Z0-9]+\.css">/);
  });

  it('serves each asset for a year, with its type, compressed as the client accepts', async () => {
    const script = /src="\/assets\/([^"]+)"/.exec(index())![1]!;
    const style = /href="\/assets\/([^"]+\.css)"/.exec(index())![1]!;
    const source = readFileSync(join(WEB, 'assets', script));

    const plain = await t.request('GET', `/assets/${script}`);
    expect(plain.status).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(String(plain.headers['content-type'])).toMatch(/^application\/javascript/);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');
    expect(plain.raw).toBe(source.toString('utf8'));

    const brotli = await t.app.inject({ method: 'GET', url: `/assets/${script}`, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.rawPayload).equals(source)).toBe(true);

    const gzip = await t.app.inject({ method: 'GET', url: `/assets/${script}`, headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).equals(source)).toBe(true);

    const css = await t.request('GET', `/assets/${style}`);
    expect(String(css.headers['content-type'])).toMatch(/^text\/css/);
  });

  it('answers 404 for an unknown asset or a name outside the folder', async () => {
    expect((await t.request('GET', '/assets/main-NOPE.js')).status).toBe(404);
    expect((await t.request('GET', '/assets/..%2Findex.html')).status).toBe(404);
    expect((await t.request('GET', '/assets/')).status).toBe(404);
  });

  it('answers index.html with a 404 to a browser opening an unknown page, and JSON to the API and to other clients', async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const path of ['/no-such-page', '/websites/65f1c0ffee0ddba11ad0be75/no-such-section', '/websites/65f1c0ffee0ddba11ad0be75/settings/more']) {
      const response = await t.request('GET', path, { headers: html });
      expect(response.status, path).toBe(404);
      expect(String(response.headers['content-type']), path).toMatch(/^text\/html; charset=utf-8/);
      expect(response.raw, path).toBe(index());
      expect(String(response.headers['content-security-policy']), path).toContain("script-src 'self'");
      expect(response.headers['cache-control'], path).toBe('no-cache');
      expect(response.headers.etag, path).toBeUndefined();
    }
    // The API's paths, a client that asks for no page, and a write keep the JSON error.
    for (const [method, path, accept] of [
      ['GET', '/api/v1/no-such-route', html.accept],
      ['GET', '/api', html.accept],
      ['GET', '/no-such-page', 'application/json'],
      ['GET', '/no-such-page', '*/*'],
      ['POST', '/no-such-page', html.accept],
    ] as const) {
      const response = await t.request(method, path, { headers: { accept } });
      expect(response.status, `${method} ${path} ${accept}`).toBe(404);
      expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
      expect(response.body.error.message).toBe(`No route ${method} ${path}`);
    }
  });

  it('keeps the analytics page within 150 KB of compressed JavaScript', () => {
    const assets = readdirSync(join(WEB, 'assets'));
    const gz = (name: string) => readFileSync(join(WEB, 'assets', `${name}.gz`)).length;
    const analytics = assets.find((name) => /^AnalyticsPage-.*\.js$/.test(name));
    expect(analytics).toBeDefined();
    // Generous: every script the entry preloads, the entry and the analytics chunk with its imports.
    const chunks = assets.filter((name) => /^chunk-.*\.js$/.test(name));
    const entry = /src="\/assets\/([^"]+)"/.exec(index())![1]!;
    const total = [entry, analytics!, ...chunks].reduce((sum, name) => sum + gz(name), 0);
    expect(total).toBeLessThan(150 * 1024);
  });
});
