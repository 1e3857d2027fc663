import { parse } from 'csv-parse/sync';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { flattenRow } from '../src/modules/export/csv.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';
import { PERMISSIONS } from '../src/auth/permissions.ts';

// The CSV export (issue 37 item 2): a zip with one CSV per report, each number for number the
// API's answer for the same period and filters.

const EXPORT = '/api/v1/analytics/export';

describeEachEngine('report export', (engine) => {
  const t: TestApp = useTestApp(engine);

  async function download(token: string, query: Record<string, string>) {
    const response = await t.app.inject({ method: 'GET', url: EXPORT, query, headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(String(response.headers['content-disposition'])).toMatch(/^attachment; filename="sightline-reports-2026-03-01-2026-03-31\.zip"$/);
    const files = unzipSync(new Uint8Array(response.rawPayload));
    return Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, parse(Buffer.from(bytes).toString('utf8'), { columns: true }) as Record<string, string>[]]));
  }

  /** The API's rows as the CSV holds them: flattened, every value as text, null as empty. */
  const asCsvRows = (rows: Array<Record<string, unknown>>) =>
    rows.map((row) => Object.fromEntries(Object.entries(flattenRow(row)).map(([name, value]) => [name, value === null ? '' : String(value)])));

  async function api(token: string, path: string, query: Record<string, string>) {
    const response = await t.request('GET', path, { token, query });
    expect(response.status, response.raw).toBe(200);
    return response.body;
  }

  async function expectSameAsApi(token: string, websiteId: string, query: Record<string, string>) {
    const files = await download(token, { websiteId, ...query });
    expect(Object.keys(files).sort()).toEqual(['overview.csv', 'timeseries.csv', ...BREAKDOWNS.map((kind) => `${kind}.csv`)].sort());
    const overview = await api(token, '/api/v1/analytics/overview', { websiteId, ...query });
    expect(files['overview.csv']).toEqual(asCsvRows(overview.data));
    const series = await api(token, '/api/v1/analytics/timeseries', { websiteId, ...query, fields: 'visitors,sessions,pageviews,revenue,payments,conversion_rate', interval: 'day' });
    expect(files['timeseries.csv']).toEqual(asCsvRows(series.data));
    for (const kind of BREAKDOWNS) {
      const answer = await api(token, `/api/v1/analytics/${kind}`, { websiteId, ...query, limit: '1000' });
      expect(files[`${kind}.csv`], kind).toEqual(asCsvRows(answer.data));
    }
    return files;
  }

  it('holds every report of the period, number for number the API answers', async () => {
    const { owner, website } = await analyticsFixture(t);
    const files = await expectSameAsApi(owner.token, website.id, MARCH);
    // The fixture's numbers, so the comparison is not between two empty answers.
    expect(files['overview.csv']![0]).toMatchObject({ visitors: '3', pageviews: '6' });
    expect(files['countries.csv']!.map((row) => [row.countryCode, row.visitors])).toEqual([['US', '2'], ['DE', '1']]);
    expect(files['timeseries.csv']).toHaveLength(31);
  });

  it('applies the same filters as the reports', async () => {
    const { owner, website } = await analyticsFixture(t);
    const files = await expectSameAsApi(owner.token, website.id, { ...MARCH, filter_country: 'is:US' });
    expect(files['overview.csv']![0]).toMatchObject({ visitors: '2' });
    expect(files['countries.csv']!.map((row) => row.countryCode)).toEqual(['US']);
  });

  it("answers for the website's df_ key and a viewer", async () => {
    const { owner, website } = await analyticsFixture(t);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    await download(key, MARCH);
    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    await download(viewer.token, { websiteId: website.id, ...MARCH });
  });

  it('answers 401, 403 and 404 as the reports do', async () => {
    const { owner, website } = await analyticsFixture(t);
    expectError(await t.request('GET', EXPORT, { query: { websiteId: website.id, ...MARCH } }), 401);
    const noRead = await createToken(t, owner, PERMISSIONS.filter((p) => p !== 'analytics:read'));
    expectError(await t.request('GET', EXPORT, { token: noRead, query: { websiteId: website.id, ...MARCH } }), 403, /analytics:read/);
    const other = await createWebsite(t, owner.token);
    const elsewhere = await createToken(t, owner, ['analytics:read'], [other.id]);
    expectError(await t.request('GET', EXPORT, { token: elsewhere, query: { websiteId: website.id, ...MARCH } }), 403, /not allowed/);
    const stranger = await createAccount(t);
    expectError(await t.request('GET', EXPORT, { token: stranger.token, query: { websiteId: website.id, ...MARCH } }), 404);
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['no startAt', { endAt: '2026-03-31' }, /query\.startAt/],
    ['a day that does not exist', { startAt: '2026-02-30', endAt: '2026-03-31' }, /startAt/],
    ['an unknown filter', { ...MARCH, filter_planet: 'is:Mars' }, /query\.filter_planet/],
    ['a bad country', { ...MARCH, filter_country: 'is:Atlantis' }, /query\.filter_country/],
    ['an unknown interval', { ...MARCH, interval: 'fortnight' }, /query\.interval/],
    ['an unknown parameter', { ...MARCH, format: 'xlsx' }, /query\.format/],
    ['a bad time zone', { ...MARCH, timezone: 'Mars/Olympus' }, /query\.timezone/],
  ];

  it.each(bad)('answers 400 naming the field for %s, before sending anything', async (_label, query, message) => {
    const { owner, website } = await analyticsFixture(t);
    expectError(await t.request('GET', EXPORT, { token: owner.token, query: { websiteId: website.id, ...query } }), 400, message);
  });
});

describe('CSV cells', () => {
  it('quotes commas, quotes and line breaks, and defuses formulas', async () => {
    const { toCsv } = await import('../src/modules/export/csv.ts');
    const text = toCsv([{ path: '/a,b', title: 'say "hi"', note: 'two\nlines', evil: '=HYPERLINK("x")', plus: '+1', minus: '-1', at: '@SUM(A1)', count: -3 }]);
    const [row] = parse(text, { columns: true }) as Record<string, string>[];
    expect(row).toEqual({ path: '/a,b', title: 'say "hi"', note: 'two\nlines', evil: `'=HYPERLINK("x")`, plus: "'+1", minus: "'-1", at: "'@SUM(A1)", count: '-3' });
  });
});
