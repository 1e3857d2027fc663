import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { type Website, pageview, send } from './helpers/browser-events.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { type TestAccount, createAccount, createWebsite, newEvent } from './helpers/factories.ts';

// Source, browser and OS names as the hosted service shows them (website-api.md section 7): its
// clients filter by `X` and `Mac OS`. Events stored under the names Sightline wrote before
// (`Twitter`, `macOS`, `Microsoft Edge`) read under the new ones, and the old spellings still
// filter, with the same counts.

const MAC_SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const EDGE = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86';
const LINUX_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

type Row = Record<string, unknown> & { visitors: number };

async function read(t: TestApp, owner: TestAccount, website: Website, path: string, query: Record<string, string> = {}) {
  const response = await t.request('GET', path, { token: owner.token, query: { websiteId: website.id, ...query } });
  expect(response.status, response.raw).toBe(200);
  return response.body;
}

const pairs = (rows: Row[], key: string) => rows.map((row) => [row[key], row.visitors]);

describeEachEventEngine('labels as the hosted service shows them', (engine) => {
  const t = useTestApp(engine);

  it('names x.com, twitter.com and t.co traffic X, macOS Mac OS and Edge Edge, from ingestion to every filter', async () => {
    const owner = await createAccount(t);
    const website = (await createWebsite(t, owner.token)) as Website;
    const visit = async (visitorId: string, referrer: string, userAgent: string) => {
      const response = await send(t, pageview(website, { referrer, visitorId }), { userAgent });
      expect(response.status, response.raw).toBe(200);
    };
    const [mac, edge] = [randomUUID(), randomUUID()];
    await visit(mac, 'https://x.com/someone/status/1', MAC_SAFARI);
    await visit(randomUUID(), 'https://twitter.com/someone', MAC_SAFARI);
    await visit(edge, 'https://t.co/abc', EDGE);
    await visit(randomUUID(), 'https://www.google.com/', LINUX_FIREFOX);

    const referrers = await read(t, owner, website, '/api/v1/analytics/referrers');
    expect(pairs(referrers.data, 'referrer')).toEqual([
      ['X', 3],
      ['Google', 1],
    ]);
    const systems = await read(t, owner, website, '/api/v1/analytics/operating-systems');
    expect(pairs(systems.data, 'operating_system')).toEqual([
      ['Mac OS', 2],
      ['Linux', 1],
      ['Windows', 1],
    ]);
    const browsers = await read(t, owner, website, '/api/v1/analytics/browsers');
    // Rows of equal visitors come in the order of their stored names.
    expect(new Map(pairs(browsers.data, 'browser') as [string, number][])).toEqual(
      new Map([
        ['Safari', 2],
        ['Edge', 1],
        ['Firefox', 1],
      ]),
    );

    // The shown names and the old spellings filter alike, as is and as is_not.
    const visitors = async (query: Record<string, string>) => (await read(t, owner, website, '/api/v1/analytics/overview', { ...query, fields: 'visitors' })).data[0].visitors;
    expect(await visitors({ filter_referrer: 'is:X' })).toBe(3);
    expect(await visitors({ filter_referrer: 'is:Twitter' })).toBe(3);
    expect(await visitors({ referrer: 'X' })).toBe(3);
    expect(await visitors({ filter_referrer: 'is_not:X' })).toBe(1);
    expect(await visitors({ filter_os: 'is:Mac OS' })).toBe(2);
    expect(await visitors({ filter_os: 'is:macOS' })).toBe(2);
    expect(await visitors({ filter_os: 'is_not:Mac OS' })).toBe(2);
    expect(await visitors({ filter_os: 'is:Mac OS,Linux' })).toBe(3);
    expect(await visitors({ filter_browser: 'is:Edge' })).toBe(1);
    expect(await visitors({ filter_browser: 'is:Microsoft Edge' })).toBe(1);
    // A filter applies to breakdowns of other dimensions too.
    const filtered = await read(t, owner, website, '/api/v1/analytics/referrers', { filter_os: 'is:Mac OS' });
    expect(pairs(filtered.data, 'referrer')).toEqual([['X', 2]]);

    // The visitor list, a visitor's page and the realtime map show the same names.
    const list = await read(t, owner, website, '/api/v1/visitors', { os: 'Mac OS' });
    expect(list.data.map((row: any) => [row.identity.os, row.identity.browser, row.acquisition.referrer])).toEqual([
      ['Mac OS', 'Safari', 'X'],
      ['Mac OS', 'Safari', 'X'],
    ]);
    const page = await read(t, owner, website, `/api/v1/visitors/${edge}`);
    expect([page.data.identity.browser.name, page.data.identity.os.name]).toEqual(['Edge', 'Windows']);
    const macPage = await read(t, owner, website, `/api/v1/visitors/${mac}`);
    expect(macPage.data.identity.os.name).toBe('Mac OS');
    const live = (await read(t, owner, website, '/api/v1/analytics/realtime/map')).data;
    const shown = live.visitors.find((v: any) => v.visitorId === mac);
    expect([shown.system.os.name, shown.system.browser.name, shown.referrer]).toEqual(['Mac OS', 'Safari', 'X']);
    expect(live.recentEvents.find((e: any) => e.visitorId === edge).referrer).toBe('X');
  });

  it('reads events stored under the old names under the new ones, with the same counts', async () => {
    const owner = await createAccount(t);
    const website = (await createWebsite(t, owner.token)) as Website;
    // As an installation upgraded from before the rename holds them.
    const old = (visitorId: string, os: string, referrerSource: string, referrerHost: string) =>
      newEvent(website.id, visitorId, {
        sessionId: `s-${visitorId}`,
        hostname: website.domain,
        occurredAt: '2026-03-02T10:00:00.000Z',
        path: '/',
        browser: 'Safari',
        os,
        device: 'desktop',
        details: { referrerSource, referrerHost },
      });
    await writeAndDerive(t, [old('v1', 'macOS', 'Twitter', 'x.com'), old('v2', 'macOS', 'Twitter', 't.co'), old('v3', 'iOS', 'Google', 'google.com')]);
    const march = { startAt: '2026-03-01', endAt: '2026-03-31' };
    expect(pairs((await read(t, owner, website, '/api/v1/analytics/referrers', march)).data, 'referrer')).toEqual([
      ['X', 2],
      ['Google', 1],
    ]);
    expect(pairs((await read(t, owner, website, '/api/v1/analytics/operating-systems', march)).data, 'operating_system')).toEqual([
      ['Mac OS', 2],
      ['iOS', 1],
    ]);
    for (const filter of ['is:X', 'is:Twitter']) {
      const pages = await read(t, owner, website, '/api/v1/analytics/pages', { ...march, filter_referrer: filter });
      expect(pairs(pages.data, 'path'), filter).toEqual([['/', 2]]);
    }
    const series = await read(t, owner, website, '/api/v1/analytics/timeseries', { ...march, interval: 'month', fields: 'visitors', filter_os: 'is:Mac OS' });
    expect(series.totals.visitors).toBe(2);
  });
});
