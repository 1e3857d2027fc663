import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getAllCountries } from 'countries-and-timezones';
import { describe, expect, it } from 'vitest';
import { flagCodes, flagUrl } from '../src/lib/country-flags.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { createAccount, createApiKey, createWebsite, newEvent } from './helpers/factories.ts';

// The countries breakdown's `image`: a flag served by Sightline itself at
// {PUBLIC_URL}/flags/{cc}.svg, from the flag-icons package (website-api.md section 7).

const PUBLIC_URL = 'https://stats.example.org';
const packageFlag = (code: string) =>
  readFileSync(join(dirname(createRequire(import.meta.url).resolve('flag-icons/package.json')), 'flags', '4x3', `${code}.svg`));

describe('GET /flags/{cc}.svg', () => {
  const t: TestApp = useTestApp('sqlite', { publicUrl: PUBLIC_URL });
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

  it('answers the flag of a known country as a cacheable SVG, without a credential', async () => {
    const response = await get('/flags/us.svg');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('image/svg+xml');
    expect(response.rawPayload.equals(packageFlag('us'))).toBe(true);
    expect(response.body).toMatch(/^<svg[\s>]/);
    const cacheControl = String(response.headers['cache-control']);
    expect(cacheControl).toMatch(/^public, max-age=\d+$/);
    expect(Number(/max-age=(\d+)/.exec(cacheControl)![1])).toBeGreaterThanOrEqual(7 * 24 * 3600);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(String(response.headers['content-security-policy'])).toMatch(/default-src 'none'/);
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers 304 to a client whose copy is current, and HEAD without a body', async () => {
    const first = await get('/flags/de.svg');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const again = await get('/flags/de.svg', { 'if-none-match': `W/"other", ${etag}` });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect((await get('/flags/de.svg', { 'if-none-match': '"other"' })).statusCode).toBe(200);
    const head = await t.app.inject({ method: 'HEAD', url: '/flags/de.svg' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('image/svg+xml');
    expect(head.body).toBe('');
  });

  it('ignores credentials: a bad bearer token still gets the flag', async () => {
    expect((await get('/flags/fr.svg', { authorization: 'Bearer dft_nope' })).statusCode).toBe(200);
  });

  it('answers 404 in the error envelope for a code without a flag or a name of another form', async () => {
    for (const name of ['zz.svg', 'US.svg', 'usa.svg', 'us.png', 'us', 'us.svg.svg', 'gb-eng.svg', 'eu.SVG', '.svg', 'u.svg']) {
      const response = await get(`/flags/${name}`);
      expect(response.statusCode, name).toBe(404);
      expect(response.json(), name).toMatchObject({ status: 'error', error: { code: 404 } });
    }
  });

  it('never reaches a file outside the flags: traversal attempts are a 404 or 400, never a file', async () => {
    const attempts = [
      '/flags/..%2Fpackage.json',
      '/flags/..%2F..%2F..%2Fpackage.json',
      '/flags/%2e%2e%2f%2e%2e%2fpackage.json',
      '/flags/../package.json',
      '/flags/..%5Cpackage.json',
      '/flags/us.svg%00.json',
      '/flags/%00',
      '/flags/us%2Esvg%2F..%2F..%2F1x1%2Fus.svg',
      '/flags/%252e%252e%252fpackage.json',
      '/flags/',
    ];
    for (const url of attempts) {
      const response = await get(url);
      expect([400, 404], `${url}: ${response.statusCode} ${response.body.slice(0, 80)}`).toContain(response.statusCode);
      expect(response.body, url).not.toMatch(/"name"\s*:\s*"(flag-icons|sightline)"/);
      expect(response.headers['content-type'], url).not.toBe('image/svg+xml');
    }
  });

  it('has a flag for every ISO 3166-1 alpha-2 country', () => {
    const missing = Object.keys(getAllCountries()).filter((code) => !flagCodes().has(code.toLowerCase()));
    expect(missing).toEqual([]);
    expect(flagCodes().size).toBeGreaterThanOrEqual(249);
  });

  it('builds the URL from the public URL, lower-case, and null for no country or one without a flag', () => {
    expect(flagUrl(PUBLIC_URL, 'US')).toBe(`${PUBLIC_URL}/flags/us.svg`);
    expect(flagUrl(PUBLIC_URL, 'gb')).toBe(`${PUBLIC_URL}/flags/gb.svg`);
    expect(flagUrl(PUBLIC_URL, null)).toBeNull();
    expect(flagUrl(PUBLIC_URL, undefined)).toBeNull();
    expect(flagUrl(PUBLIC_URL, '')).toBeNull();
    expect(flagUrl(PUBLIC_URL, 'ZZ')).toBeNull();
    expect(flagUrl(PUBLIC_URL, '../x')).toBeNull();
  });
});

describeEachEventEngine('the countries breakdown links each country to its flag', (engine) => {
  const t: TestApp = useTestApp(engine, { publicUrl: PUBLIC_URL });

  it('answers image as the flag URL under PUBLIC_URL for a known country, null for visitors of no known country', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    await t.app.events.write([
      newEvent(website.id, 'v-us-1', { country: 'US' }),
      newEvent(website.id, 'v-us-2', { country: 'US' }),
      newEvent(website.id, 'v-jp', { country: 'JP' }),
      newEvent(website.id, 'v-none', { country: null }),
    ]);
    const response = await t.request('GET', '/api/v1/analytics/countries', { token: key });
    expect(response.status, response.raw).toBe(200);
    const rows = response.body.data.map((row: any) => [row.countryCode, row.country, row.image]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['US', 'United States', `${PUBLIC_URL}/flags/us.svg`],
        ['JP', 'Japan', `${PUBLIC_URL}/flags/jp.svg`],
        [null, null, null],
      ]),
    );
    expect(rows).toHaveLength(3);

    // The URL answers the flag through this very server.
    const image = new URL(rows[0][2]);
    const flag = await t.app.inject({ method: 'GET', url: image.pathname });
    expect(flag.statusCode).toBe(200);
    expect(flag.headers['content-type']).toBe('image/svg+xml');
  });
});
