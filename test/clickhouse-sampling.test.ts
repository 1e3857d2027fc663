import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import type { ClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { fillSpan } from '../src/modules/events/clickhouse-session-fill.ts';
import { rateFor } from '../src/modules/stats/clickhouse/sampling-ch.ts';
import { useTestApp } from './helpers/app.ts';
import { describeWithClickHouse } from './helpers/clickhouse.ts';
import { createApiKey, createWebsite, ownerWithWebsite } from './helpers/factories.ts';
import { attributesNotAsSessions } from './helpers/stored-sessions.ts';

// Sampled reads on ClickHouse (src/modules/stats/clickhouse/sampling-ch.ts), with the threshold
// lowered to 10,000 events: a website of 40,000 events in range is read at SAMPLE 0.25, its counts
// scaled back up within 10 % of the exact ones (the rows are a function of their number, so the
// sample is the same at every run), the filtered time series too; `exact=true`, unfiltered reads and a small
// website are never sampled, and only a sampled answer carries X-Sightline-Sample-Rate and `sampling`.
// The funnel (its revenue exact) and the visitor list's total (its page exact, hasMore from the
// page) sample the same way, filtered or not.

const THRESHOLD = 10_000;
const LARGE = 40_000;
const SMALL = 2_000;
const DAY_MS = 86_400_000;

/** Synthetic events over the four days before `end`: sessions of four events, 6,000 visitors, two devices and sources per session. */
async function seed(ch: ClickHouse, websiteId: string, events: number, end: number): Promise<void> {
  const span = 4 * DAY_MS;
  const session = sql`intDiv(number, 4)`;
  const ms = sql`(${end - span} + intDiv(number * ${span}, ${events}))`;
  const pathOf = (n: ReturnType<typeof sql>) => sql`arrayElement(['/', '/pricing', '/docs', '/blog'], (intHash32(${n}) % 4) + 1)`;
  const referrer = sql`arrayElement(['Direct/None', 'Google', 'Hacker News'], (intHash32(${session} + 4) % 3) + 1)`;
  // With the session's attributes on each event, as the relay writes them: its first event (number
  // session * 4, always a page view) gives the entry page, its source is the session's.
  await ch.command(sql`insert into events (id, website_id, type, name, visitor_id, session_id, hostname, path, device, referrer_source, source, occurred_at, occurred_ms,
      s_entry_hostname, s_entry_path, s_referrer_source)
    select concat(${websiteId}, '-', toString(number)), ${websiteId},
      if(number % 20 = 3, 'custom', 'pageview'), if(number % 20 = 3, 'signup', NULL),
      concat('v', toString(intHash32(${session} + 7) % 6000)), concat(${websiteId}, '-s', toString(${session})),
      'sample.example.com', ${pathOf(sql`number`)},
      arrayElement(['desktop', 'mobile'], (intHash32(${session} + 3) % 2) + 1),
      ${referrer},
      'sdk', toDateTime(intDiv(${ms}, 1000)), toUInt64(${ms}),
      'sample.example.com', ${pathOf(sql`${session} * 4`)}, ${referrer}
    from numbers(${sql.lit(events)})`);
  // The sessions table as the relay writes it, from the same events.
  await fillSpan(ch, end - span - DAY_MS, end + DAY_MS, [websiteId]);
}

const within = (sampled: number, exact: number, share: number) => Math.abs(sampled - exact) <= exact * share;
/** Within three standard errors of a count of `exact` visitors read from a sample of `rate` and scaled by 1/rate (binomial). */
const withinErrors = (sampled: number, exact: number, rate: number) => Math.abs(sampled - exact) <= 3 * Math.sqrt((exact * (1 - rate)) / rate);

type Answer = { status: number; raw: string; headers: Record<string, unknown>; body: { sampling?: unknown } };

/** A read answered from a sample at 0.25, and the same read with exact=true answered whole, each saying so. */
function expectSampledAndExact(sampled: Answer, exact: Answer): void {
  expect(sampled.status, sampled.raw).toBe(200);
  expect(sampled.headers['x-sightline-sample-rate']).toBe('0.25');
  expect(sampled.body.sampling).toEqual({ rate: 0.25 });
  expect(exact.status, exact.raw).toBe(200);
  expect(exact.headers['x-sightline-sample-rate']).toBeUndefined();
  expect(exact.body.sampling).toBeUndefined();
}

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
  let funnelId: string;
  let smallFunnelId: string;
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
    // The seed's attributes are the sessions' (a filter on them reads the events' columns).
    expect(await attributesNotAsSessions(t.app.clickhouse!.ch, websiteId)).toEqual([]);
    const steps = [
      { type: 'pageview', url: '/pricing' },
      { type: 'pageview', url: '/docs' },
      { type: 'goal', goalName: 'signup' },
    ];
    const created = async (id: string) => {
      const response = await t.request('POST', `/api/v1/admin/websites/${id}/funnels`, { token, body: { name: 'Docs to signup', steps } });
      expect(response.status, response.raw).toBe(200);
      return response.body.data[0].id as string;
    };
    funnelId = await created(websiteId);
    smallFunnelId = await created(small.id);
    // Payments of twenty visitors, in the range: the funnel's revenue stays exact when its visitors are sampled.
    const payers = await t.app.clickhouse!.ch.rows<{ visitor_id: string }>(
      sql`select distinct visitor_id from events where website_id = ${websiteId} order by visitor_id limit 20`,
    );
    for (const [i, { visitor_id: visitorId }] of payers.entries()) {
      const body = { amount: 10 + i, currency: 'USD', transaction_id: `tx-sampled-${i}`, datafast_visitor_id: visitorId, timestamp: new Date(end - i * 3_600_000).toISOString() };
      const paid = await t.request('POST', '/api/v1/payments', { token: key, body });
      expect(paid.status, paid.raw).toBe(200);
    }
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

  const funnel = (id: string, apiKey: string, query: Record<string, string>) =>
    t.request('GET', `/api/v1/analytics/funnels/${id}`, { token: apiKey, query: { ...range, ...query } });
  type Step = { visitors: number; revenue: number };

  it('answers a funnel of a large range from a sample, filtered or not: visitors scaled within the error of the sample, revenue exact, and says so', async () => {
    for (const filter of [{}, { filter_device: 'desktop' }, { filter_referrer: 'Google' }] as Record<string, string>[]) {
      const sampled = await funnel(funnelId, key, filter);
      const exact = await funnel(funnelId, key, { ...filter, exact: 'true' });
      expectSampledAndExact(sampled, exact);
      const [s, e] = [sampled.body.data[0].steps as Step[], exact.body.data[0].steps as Step[]];
      expect(e[2]!.visitors).toBeGreaterThan(100);
      for (const [i, step] of s.entries()) {
        expect(withinErrors(step.visitors, e[i]!.visitors, 0.25), `step ${i + 1}: ${step.visitors} against ${e[i]!.visitors}`).toBe(true);
        expect(step.revenue).toBe(e[i]!.revenue);
      }
      // Scaled after adding up the depths: a later step never has more visitors.
      expect(s.map((step) => step.visitors)).toEqual(s.map((step) => step.visitors).sort((a, b) => b - a));
    }
    const exact = await funnel(funnelId, key, { exact: 'true' });
    expect(exact.body.data[0].steps[0].revenue).toBeGreaterThan(0);
  });

  it('counts a funnel exactly for exact=true, a small website, and refuses exact=maybe naming it', async () => {
    const exact = await funnel(funnelId, key, { exact: 'true' });
    // Step one: the visitors with a /pricing view in the range, as ClickHouse counts them.
    const [row] = await t.app.clickhouse!.ch.rows<{ n: string }>(
      sql`select uniqExact(visitor_id) as n from events where website_id = ${largeId} and type = 'pageview' and path = '/pricing'`,
    );
    expect(exact.body.data[0].steps[0].visitors).toBe(Number(row!.n));
    const small = await funnel(smallFunnelId, smallKey, {});
    expect(small.status).toBe(200);
    expect(small.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(small.body.sampling).toBeUndefined();
    expect(small.body.data).toEqual((await funnel(smallFunnelId, smallKey, { exact: 'true' })).body.data);
    const refused = await funnel(funnelId, key, { exact: 'maybe' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/exact/);
  });

  const list = (apiKey: string, query: Record<string, string>) => t.request('GET', '/api/v1/visitors', { token: apiKey, query: { ...range, ...query } });

  it("answers the visitor list's total from a sample for a large range, the page itself exact, and says so", async () => {
    for (const filter of [{}, { filter_device: 'desktop' }, { completedGoal: 'signup' }, { isCustomer: 'false' }] as Record<string, string>[]) {
      const sampled = await list(key, { ...filter, limit: '50' });
      const exact = await list(key, { ...filter, limit: '50', exact: 'true' });
      expectSampledAndExact(sampled, exact);
      expect(sampled.body.data).toEqual(exact.body.data);
      const [s, e] = [sampled.body.pagination.total, exact.body.pagination.total];
      expect(e).toBeGreaterThan(1000);
      expect(within(s, e, 0.1), `${JSON.stringify(filter)}: ${s} against ${e}`).toBe(true);
      expect(sampled.body.pagination.hasMore).toBe(true);
    }
    // The exact total is every visitor of the range, as ClickHouse counts them.
    const [row] = await t.app.clickhouse!.ch.rows<{ n: string }>(sql`select uniqExact(visitor_id) as n from events where website_id = ${largeId}`);
    expect((await list(key, { exact: 'true' })).body.pagination.total).toBe(Number(row!.n));
  });

  it('says whether more visitors follow from the page itself, so paging ends where the list does whatever the estimate', async () => {
    const total = (await list(key, { exact: 'true', limit: '1' })).body.pagination.total as number;
    for (const [filter, payers] of [[{}, 0], [{ isCustomer: 'false' }, 20]] as [Record<string, string>, number][]) {
      const last = total - payers;
      const tail = await list(key, { ...filter, limit: '10', offset: String(last - 4) });
      expect(tail.headers['x-sightline-sample-rate']).toBe('0.25');
      expect(tail.body.data).toHaveLength(4);
      expect(tail.body.pagination.hasMore).toBe(false);
      const before = await list(key, { ...filter, limit: '10', offset: String(last - 14) });
      expect(before.body.data).toHaveLength(10);
      expect(before.body.pagination.hasMore).toBe(true);
      const exactly = await list(key, { ...filter, limit: '10', offset: String(last - 10) });
      expect(exactly.body.data).toHaveLength(10);
      expect(exactly.body.pagination.hasMore).toBe(false);
    }
  });

  it("keeps a small website's visitor list and the customers' list exact", async () => {
    const small = await list(smallKey, {});
    expect(small.status).toBe(200);
    expect(small.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(small.body.sampling).toBeUndefined();
    expect(small.body).toEqual((await list(smallKey, { exact: 'true' })).body);
    const customers = await list(key, { isCustomer: 'true' });
    expect(customers.headers['x-sightline-sample-rate']).toBeUndefined();
    expect(customers.body.pagination).toEqual({ limit: 100, offset: 0, total: 20, hasMore: false });
  });

  it('refuses an exact that is not a boolean, naming it', async () => {
    const response = await read('overview', key, { filter_device: 'desktop', exact: 'maybe' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/exact/);
  });
});
