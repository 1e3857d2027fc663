import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import type { ClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { fillSpan } from '../src/modules/events/clickhouse-session-fill.ts';
import { rateFor } from '../src/modules/stats/clickhouse/sampling-ch.ts';
import { useTestApp } from './helpers/app.ts';
import { describeWithClickHouse } from './helpers/clickhouse.ts';
import { createApiKey, createWebsite, ownerWithWebsite } from './helpers/factories.ts';

// Sampled reads on ClickHouse (src/modules/stats/clickhouse/sampling-ch.ts), with the threshold
// lowered to 10,000 events: a website of 40,000 events in range is read at SAMPLE 0.25, its counts
// scaled back up within 10 % of the exact ones (the rows are a function of their number, so the
// sample is the same at every run), the filtered time series too; `exact=true`, unfiltered reads and a small
// website are never sampled, and only a sampled answer carries X-Sightline-Sample-Rate and `sampling`.

const THRESHOLD = 10_000;
const LARGE = 40_000;
const SMALL = 2_000;
const DAY_MS = 86_400_000;

/** Synthetic events over the four days before `end`: sessions of four events, 6,000 visitors, two devices and sources per session. */
async function seed(ch: ClickHouse, websiteId: string, events: number, end: number): Promise<void> {
  const span = 4 * DAY_MS;
  const session = sql`intDiv(number, 4)`;
  const ms = sql`(${end - span} + intDiv(number * ${span}, ${events}))`;
  await ch.command(sql`insert into events (id, website_id, type, name, visitor_id, session_id, hostname, path, device, referrer_source, source, occurred_at, occurred_ms)
    select concat(${websiteId}, '-', toString(number)), ${websiteId},
      if(number % 20 = 3, 'custom', 'pageview'), if(number % 20 = 3, 'signup', NULL),
      concat('v', toString(intHash32(${session} + 7) % 6000)), concat(${websiteId}, '-s', toString(${session})),
      'sample.example.com', arrayElement(['/', '/pricing', '/docs', '/blog'], (intHash32(number) % 4) + 1),
      arrayElement(['desktop', 'mobile'], (intHash32(${session} + 3) % 2) + 1),
      arrayElement(['Direct/None', 'Google', 'Hacker News'], (intHash32(${session} + 4) % 3) + 1),
      'sdk', toDateTime(intDiv(${ms}, 1000)), toUInt64(${ms})
    from numbers(${sql.lit(events)})`);
  // The sessions table as the relay writes it, from the same events.
  await fillSpan(ch, end - span - DAY_MS, end + DAY_MS, [websiteId]);
}

const within = (sampled: number, exact: number, share: number) => Math.abs(sampled - exact) <= exact * share;

describe('CLICKHOUSE_SAMPLE_THRESHOLD', () => {
  const load = (value?: string) => loadConfig({ ...(value === undefined ? {} : { CLICKHOUSE_SAMPLE_THRESHOLD: value }) }, { databaseUrl: 'test' });
  it('is 10 million unless set, 0 turns sampling off, anything but a whole number of at least 0 is refused by name', () => {
    expect(load().clickhouseSampleThreshold).toBe(10_000_000);
    expect(load('0').clickhouseSampleThreshold).toBe(0);
    expect(load('2500000').clickhouseSampleThreshold).toBe(2_500_000);
    for (const bad of ['-1', 'ten', '1.5']) expect(() => load(bad)).toThrow(ConfigError);
    expect(() => load('-1')).toThrow(/CLICKHOUSE_SAMPLE_THRESHOLD/);
  });
});

describeWithClickHouse('sampled reads of large ranges on ClickHouse', () => {
  const t = useTestApp('clickhouse', { clickhouseSampleThreshold: THRESHOLD });
  let key: string;
  let smallKey: string;
  let largeId: string;
  let range: { startAt: string; endAt: string };

  beforeAll(async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const token = owner.token;
    const websiteId: string = website.id;
    largeId = websiteId;
    const small = await createWebsite(t, token);
    key = (await createApiKey(t, token, websiteId)).key;
    smallKey = (await createApiKey(t, token, small.id)).key;
    // The relay made its tables and its first turn; the events are written as ClickHouse holds them.
    await t.app.clickhouse!.relay.settle();
    const end = Date.now() - 60_000;
    range = { startAt: new Date(end - 5 * DAY_MS).toISOString(), endAt: new Date(end + 30_000).toISOString() };
    await seed(t.app.clickhouse!.ch, websiteId, LARGE, end);
    await seed(t.app.clickhouse!.ch, small.id, SMALL, end);
  }, 120_000);

  const read = (path: string, apiKey: string, query: Record<string, string>) => t.request('GET', `/api/v1/analytics/${path}`, { token: apiKey, query: { ...range, ...query } });

  it('sizes the rate as Plausible does: none at or under the threshold or above 0.4, never under 0.01', () => {
    expect(rateFor(10_000, THRESHOLD)).toBeNull();
    expect(rateFor(20_000, THRESHOLD)).toBeNull();
    expect(rateFor(LARGE, THRESHOLD)).toBe(0.25);
    expect(rateFor(3_000_000, THRESHOLD)).toBe(0.01);
  });

  it('answers a filtered overview of a large range from a sample, scaled within 10 % of the exact counts, and says so', async () => {
    for (const filter of [{ filter_device: 'desktop' }, { filter_referrer: 'Google' }] as Record<string, string>[]) {
      const sampled = await read('overview', key, filter);
      const exact = await read('overview', key, { ...filter, exact: 'true' });
      expect(sampled.status).toBe(200);
      expect(sampled.headers['x-sightline-sample-rate']).toBe('0.25');
      expect(sampled.body.sampling).toEqual({ rate: 0.25 });
      expect(exact.status).toBe(200);
      expect(exact.headers['x-sightline-sample-rate']).toBeUndefined();
      expect(exact.body.sampling).toBeUndefined();
      const [s, e] = [sampled.body.data[0], exact.body.data[0]];
      expect(e.visitors).toBeGreaterThan(1000);
      for (const name of ['visitors', 'pageviews', 'sessions']) expect(within(s[name], e[name], 0.1), `${name}: ${s[name]} against ${e[name]}`).toBe(true);
      expect(Math.abs(s.bounce_rate - e.bounce_rate)).toBeLessThanOrEqual(5);
    }
  });

  it('reads exact=true as every event: the pageviews equal ClickHouse own count', async () => {
    const exact = await read('overview', key, { filter_device: 'desktop', exact: 'true' });
    const [row] = await t.app.clickhouse!.ch.rows<{ n: string }>(
      sql`select count() as n from events where website_id = ${largeId} and device = 'desktop' and type = 'pageview'`,
    );
    expect(exact.body.data[0].pageviews).toBe(Number(row!.n));
  });

  it('answers a filtered breakdown from a sample, the same rows, each within 10 % of the exact one', async () => {
    const sampled = await read('pages', key, { filter_device: 'mobile' });
    const exact = await read('pages', key, { filter_device: 'mobile', exact: 'true' });
    expect(sampled.headers['x-sightline-sample-rate']).toBe('0.25');
    expect(sampled.body.sampling).toEqual({ rate: 0.25 });
    expect(exact.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(sampled.body.data.map((row: { path: string }) => row.path).sort()).toEqual(exact.body.data.map((row: { path: string }) => row.path).sort());
    for (const row of sampled.body.data) {
      const truth = exact.body.data.find((other: { path: string }) => other.path === row.path);
      expect(within(row.visitors, truth.visitors, 0.1), `${row.path}: ${row.visitors} against ${truth.visitors}`).toBe(true);
      expect(within(row.pageviews, truth.pageviews, 0.1)).toBe(true);
    }
  });

  it('counts a filtered time series from the same sample, its totals within 10 % of the exact ones; an unfiltered one exactly', async () => {
    const series = (query: Record<string, string>) => read('timeseries', key, { fields: 'visitors,pageviews', interval: 'day', ...query });
    const sampled = await series({ filter_device: 'desktop' });
    const exact = await series({ filter_device: 'desktop', exact: 'true' });
    expect(sampled.status, sampled.raw).toBe(200);
    expect(sampled.headers['x-sightline-sample-rate']).toBe('0.25');
    expect(sampled.body.sampling).toEqual({ rate: 0.25 });
    expect(exact.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(exact.body.sampling).toBeUndefined();
    for (const name of ['visitors', 'pageviews']) {
      expect(within(sampled.body.totals[name], exact.body.totals[name], 0.1), `${name}: ${sampled.body.totals[name]} against ${exact.body.totals[name]}`).toBe(true);
    }
    const unfiltered = await series({});
    expect(unfiltered.status).toBe(200);
    expect(unfiltered.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(unfiltered.body.sampling).toBeUndefined();
  });

  it('never samples what the rollups answer, nor a small website', async () => {
    const unfiltered = await read('overview', key, {});
    expect(unfiltered.status).toBe(200);
    expect(unfiltered.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(unfiltered.body.sampling).toBeUndefined();
    const pages = await read('pages', key, {});
    expect(pages.headers['x-sightline-sample-rate']).toBeUndefined();
    for (const path of ['overview', 'pages']) {
      const small = await read(path, smallKey, { filter_device: 'desktop' });
      const exact = await read(path, smallKey, { filter_device: 'desktop', exact: 'true' });
      expect(small.status).toBe(200);
      expect(small.headers['x-sightline-sample-rate']).toBeUndefined();
      expect(small.body.sampling).toBeUndefined();
      expect(small.body.data).toEqual(exact.body.data);
    }
  });

  it('refuses an exact that is not a boolean, naming it', async () => {
    const response = await read('overview', key, { filter_device: 'desktop', exact: 'maybe' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/exact/);
  });
});
