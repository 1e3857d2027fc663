import { describe, expect, it } from 'vitest';
import { canonicaliseStoredTimeZones } from '../src/db/migrations/0005-canonical-time-zones.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { createAccount, createWebsite, expectError } from './helpers/factories.ts';

// Contract section 4: a time zone is stored and answered in its canonical IANA spelling,
// everywhere a zone is answered. Node's ICU alone answers the old CLDR spellings.

const WEBSITES = '/api/v1/admin/websites';
const TIMESERIES = '/api/v1/analytics/timeseries';
const uniqueDomain = () => `tz-${Math.random().toString(16).slice(2, 12)}.example.com`;

const SPELLINGS: Array<[string, string]> = [
  ['Asia/Kolkata', 'Asia/Kolkata'],
  ['Asia/Calcutta', 'Asia/Kolkata'],
  ['asia/kolkata', 'Asia/Kolkata'],
  ['US/Eastern', 'America/New_York'],
  ['Europe/Kiev', 'Europe/Kyiv'],
  ['Europe/Kyiv', 'Europe/Kyiv'],
  ['Asia/Saigon', 'Asia/Ho_Chi_Minh'],
  ['Asia/Ho_Chi_Minh', 'Asia/Ho_Chi_Minh'],
  ['America/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
  ['Asia/Rangoon', 'Asia/Yangon'],
  ['Europe/Uzhgorod', 'Europe/Kyiv'],
  // tzdb links these to another country's zone (data merged since 1970): not a renaming.
  ['Europe/Amsterdam', 'Europe/Amsterdam'],
  ['Atlantic/Reykjavik', 'Atlantic/Reykjavik'],
  // Current names that Node 20's ICU answers in an old spelling (Asmera, Truk, Coral_Harbour).
  ['Africa/Asmara', 'Africa/Asmara'],
  ['Pacific/Chuuk', 'Pacific/Chuuk'],
  ['America/Atikokan', 'America/Atikokan'],
  ['Etc/UTC', 'UTC'],
  ['UTC', 'UTC'],
];

describeEachEventEngine('time zones', (engine) => {
  const t: TestApp = useTestApp(engine);

  async function websiteTimezoneEverywhere(token: string, id: string) {
    const one = await t.request('GET', `${WEBSITES}/${id}`, { token });
    const list = await t.request('GET', WEBSITES, { token });
    const series = await t.request('GET', TIMESERIES, { token, query: { websiteId: id, fields: 'visitors', interval: 'day' } });
    expect(series.status, series.raw).toBe(200);
    return {
      get: one.body.data[0].timezone,
      list: list.body.data.find((w: { id: string }) => w.id === id).timezone,
      timeseries: series.body.timezone,
    };
  }

  describe.each(SPELLINGS)('%s', (given, canonical) => {
    it(`is stored and answered as ${canonical} by POST, GET, the list and the time series`, async () => {
      const owner = await createAccount(t);
      const created = await t.request('POST', WEBSITES, { token: owner.token, body: { domain: uniqueDomain(), timezone: given } });
      expect(created.status, created.raw).toBe(200);
      expect(created.body.data[0].timezone).toBe(canonical);
      const id = created.body.data[0].id;
      expect(await websiteTimezoneEverywhere(owner.token, id)).toEqual({ get: canonical, list: canonical, timeseries: canonical });
    });

    it(`is answered as ${canonical} by PUT`, async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const updated = await t.request('PUT', `${WEBSITES}/${website.id}`, { token: owner.token, body: { timezone: given } });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0].timezone).toBe(canonical);
      expect((await websiteTimezoneEverywhere(owner.token, website.id)).get).toBe(canonical);
    });
  });

  it('answers the time series in the canonical spelling of a ?timezone= alias, with Kolkata offsets', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const series = await t.request('GET', TIMESERIES, {
      token: owner.token,
      query: { websiteId: website.id, fields: 'visitors', interval: 'day', startAt: '2026-03-01', endAt: '2026-03-02', timezone: 'Asia/Calcutta' },
    });
    expect(series.status, series.raw).toBe(200);
    expect(series.body.timezone).toBe('Asia/Kolkata');
    expect(series.body.data.map((b: { timestamp: string }) => b.timestamp)).toEqual([
      '2026-03-01T00:00:00.000+05:30',
      '2026-03-02T00:00:00.000+05:30',
    ]);
  });

  it.each(['Mars/Phobos', '+05:30', 'Asia/Kolkata ', 'Factory'])('still refuses %j (400 naming body.timezone)', async (timezone) => {
    const owner = await createAccount(t);
    expectError(await t.request('POST', WEBSITES, { token: owner.token, body: { domain: uniqueDomain(), timezone } }), 400, /body\.timezone/);
  });

  it('migrates websites stored with an old spelling, leaving their updatedAt alone', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    await t.db.updateTable('websites').set({ timezone: 'Asia/Calcutta' }).where('id', '=', website.id).execute();
    const before = (await t.request('GET', `${WEBSITES}/${website.id}`, { token: owner.token })).body.data[0];

    expect(await canonicaliseStoredTimeZones(t.db)).toBeGreaterThanOrEqual(1);

    expect(await websiteTimezoneEverywhere(owner.token, website.id)).toEqual({
      get: 'Asia/Kolkata',
      list: 'Asia/Kolkata',
      timeseries: 'Asia/Kolkata',
    });
    const after = (await t.request('GET', `${WEBSITES}/${website.id}`, { token: owner.token })).body.data[0];
    expect(after.updatedAt).toBe(before.updatedAt);
  });
});
