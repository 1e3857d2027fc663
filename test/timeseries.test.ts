import { describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { rebuildDailyRollups } from '../src/modules/analytics/rollup-rebuild.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine, itWithRelationalRollups } from './helpers/clickhouse.ts';
import {
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
  newEvent,
} from './helpers/factories.ts';

const URL = '/api/v1/analytics/timeseries';
const ALL_FIELDS = 'visitors,sessions,pageviews,revenue,payments,conversion_rate';

function pageview(websiteId: string, visitorId: string, occurredAt: string, extra: Partial<NewEvent> = {}): NewEvent {
  return newEvent(websiteId, visitorId, { occurredAt, ...extra });
}

function goal(websiteId: string, visitorId: string, occurredAt: string, extra: Partial<NewEvent> = {}): NewEvent {
  return pageview(websiteId, visitorId, occurredAt, { type: 'custom', name: 'signup', ...extra });
}

interface PaymentRow {
  amountMinor: number;
  occurredAt: string;
  currency?: string;
  renewal?: boolean;
  refunded?: boolean;
  visitorId?: string | null;
}

async function insertPayments(t: TestApp, websiteId: string, payments: PaymentRow[]) {
  await t.db
    .insertInto('payments')
    .values(
      payments.map((p) => ({
        id: newId(),
        website_id: websiteId,
        transaction_id: `tx-${newId()}`,
        amount_minor: p.amountMinor,
        currency: p.currency ?? 'USD',
        visitor_id: p.visitorId ?? null,
        email: null,
        renewal: p.renewal ?? false,
        refunded: p.refunded ?? false,
        occurred_at: p.occurredAt,
        created_at: p.occurredAt,
      })),
    )
    .execute();
}

/** A website in `timezone` owned by a fresh account. */
async function site(t: TestApp, timezone: string) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  await updateWebsite(t, owner.token, website.id, { timezone });
  return { owner, website, token: owner.token };
}

async function updateWebsite(t: TestApp, token: string, websiteId: string, body: Record<string, unknown>) {
  const response = await t.request('PUT', `/api/v1/admin/websites/${websiteId}`, { token, body });
  expect(response.status, response.raw).toBe(200);
}

async function series(t: TestApp, token: string, query: Record<string, string>) {
  const response = await t.request('GET', URL, { token, query });
  expect(response.status, response.raw).toBe(200);
  return response.body as {
    status: string;
    fields: string[];
    interval: string;
    timezone: string;
    currency: string;
    totals: Record<string, number>;
    data: Array<Record<string, number> & { name: string; timestamp: string }>;
  };
}

const pick = (data: Array<Record<string, unknown>>, key: string) => data.map((point) => point[key]);

// An independent oracle for the property tests: local days from Intl, weeks from Monday.
function localDay(occurredAt: string, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(occurredAt),
  );
}
function mondayOf(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
  return date.toISOString().slice(0, 10);
}

describeEachEventEngine('time series', (engine) => {
  const t = useTestApp(engine);

  describe('buckets', () => {
    it('counts a day series per local day, with bucket starts in the zone and totals distinct over the range', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'a', '2026-05-04T03:59:59.999Z'), // 23:59 on May 3 in New York
        pageview(w, 'a', '2026-05-04T04:00:00.000Z'), // 00:00 on May 4
        pageview(w, 'b', '2026-05-04T20:00:00.000Z'),
        pageview(w, 'a', '2026-05-05T12:00:00.000Z'),
        pageview(w, 'c', '2026-05-06T04:00:00.000Z'), // May 6: outside the range
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors,pageviews', interval: 'day', startAt: '2026-05-03', endAt: '2026-05-05' });
      expect(body).toMatchObject({ status: 'success', fields: ['visitors', 'pageviews'], interval: 'day', timezone: 'America/New_York', currency: 'USD' });
      expect(body.data).toEqual([
        { name: '2026-05-03', timestamp: '2026-05-03T00:00:00.000-04:00', visitors: 1, pageviews: 1 },
        { name: '2026-05-04', timestamp: '2026-05-04T00:00:00.000-04:00', visitors: 2, pageviews: 2 },
        { name: '2026-05-05', timestamp: '2026-05-05T00:00:00.000-04:00', visitors: 1, pageviews: 1 },
      ]);
      // a and b: a is counted once although active on three days.
      expect(body.totals).toEqual({ visitors: 2, pageviews: 4 });
    });

    it('has 23 hour buckets on the March daylight-saving day in America/New_York', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'early', '2026-03-08T04:59:59.999Z'), // 23:59 on March 7: outside
        pageview(w, 'a', '2026-03-08T06:30:00.000Z'), // 01:30 EST
        pageview(w, 'b', '2026-03-08T07:30:00.000Z'), // 03:30 EDT: 02:xx does not exist
        pageview(w, 'a', '2026-03-09T03:59:59.999Z'), // 23:59 EDT
        pageview(w, 'late', '2026-03-09T04:00:00.000Z'), // March 9: outside
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors,pageviews', interval: 'hour', startAt: '2026-03-08', endAt: '2026-03-08' });
      expect(body.data).toHaveLength(23);
      expect(body.data.slice(0, 4).map((p) => [p.name, p.timestamp])).toEqual([
        ['2026-03-08 00:00', '2026-03-08T00:00:00.000-05:00'],
        ['2026-03-08 01:00', '2026-03-08T01:00:00.000-05:00'],
        ['2026-03-08 03:00', '2026-03-08T03:00:00.000-04:00'],
        ['2026-03-08 04:00', '2026-03-08T04:00:00.000-04:00'],
      ]);
      expect(body.data[22]!.timestamp).toBe('2026-03-08T23:00:00.000-04:00');
      expect(pick(body.data, 'pageviews')).toEqual([0, 1, 1, ...Array(19).fill(0), 1]);
      expect(body.totals).toEqual({ visitors: 2, pageviews: 3 });
    });

    it('has 25 hour buckets on the November daylight-saving day, the repeated hour once per offset', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'a', '2026-11-01T05:30:00.000Z'), // 01:30 EDT
        pageview(w, 'b', '2026-11-01T06:30:00.000Z'), // 01:30 EST, an hour later
        pageview(w, 'c', '2026-11-02T04:59:59.999Z'), // 23:59 EST
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'hour', startAt: '2026-11-01', endAt: '2026-11-01' });
      expect(body.data).toHaveLength(25);
      expect(body.data.slice(0, 4).map((p) => p.timestamp)).toEqual([
        '2026-11-01T00:00:00.000-04:00',
        '2026-11-01T01:00:00.000-04:00',
        '2026-11-01T01:00:00.000-05:00',
        '2026-11-01T02:00:00.000-05:00',
      ]);
      expect(body.data[24]!.timestamp).toBe('2026-11-01T23:00:00.000-05:00');
      expect(pick(body.data, 'visitors')).toEqual([0, 1, 1, ...Array(21).fill(0), 1]);
      expect(body.totals).toEqual({ visitors: 3 });
    });

    it('gives the 23-hour and the 25-hour day their whole local day in a day series', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'm1', '2026-03-08T04:59:59.999Z'), // March 7, 23:59 EST
        pageview(w, 'm2', '2026-03-08T05:00:00.000Z'), // March 8, 00:00 EST
        pageview(w, 'm3', '2026-03-09T03:59:59.999Z'), // March 8, 23:59 EDT
        pageview(w, 'm4', '2026-03-09T04:00:00.000Z'), // March 9, 00:00 EDT
        pageview(w, 'n1', '2026-11-01T03:59:59.999Z'), // October 31, 23:59 EDT
        pageview(w, 'n2', '2026-11-01T04:00:00.000Z'), // November 1, 00:00 EDT
        pageview(w, 'n3', '2026-11-02T04:59:59.999Z'), // November 1, 23:59 EST
        pageview(w, 'n4', '2026-11-02T05:00:00.000Z'), // November 2, 00:00 EST
      ]);
      const march = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'day', startAt: '2026-03-07', endAt: '2026-03-09' });
      expect(march.data).toEqual([
        { name: '2026-03-07', timestamp: '2026-03-07T00:00:00.000-05:00', visitors: 1 },
        { name: '2026-03-08', timestamp: '2026-03-08T00:00:00.000-05:00', visitors: 2 },
        { name: '2026-03-09', timestamp: '2026-03-09T00:00:00.000-04:00', visitors: 1 },
      ]);
      const november = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'day', startAt: '2026-10-31', endAt: '2026-11-02' });
      expect(november.data).toEqual([
        { name: '2026-10-31', timestamp: '2026-10-31T00:00:00.000-04:00', visitors: 1 },
        { name: '2026-11-01', timestamp: '2026-11-01T00:00:00.000-04:00', visitors: 2 },
        { name: '2026-11-02', timestamp: '2026-11-02T00:00:00.000-05:00', visitors: 1 },
      ]);
    });

    it('starts a day at 01:00 where the clocks skip midnight (America/Santiago)', async () => {
      const { website, token } = await site(t, 'America/Santiago');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'a', '2026-09-06T03:59:59.999Z'), // September 5, 23:59 at -04:00
        pageview(w, 'b', '2026-09-06T04:00:00.000Z'), // September 6, 01:00 at -03:00
        pageview(w, 'c', '2026-09-07T02:59:59.999Z'), // September 6, 23:59
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'day', startAt: '2026-09-05', endAt: '2026-09-07' });
      expect(body.data).toEqual([
        { name: '2026-09-05', timestamp: '2026-09-05T00:00:00.000-04:00', visitors: 1 },
        { name: '2026-09-06', timestamp: '2026-09-06T01:00:00.000-03:00', visitors: 2 },
        { name: '2026-09-07', timestamp: '2026-09-07T00:00:00.000-03:00', visitors: 0 },
      ]);
    });

    it('puts hour buckets on local hours in a zone half an hour off UTC', async () => {
      const { website, token } = await site(t, 'Asia/Kolkata');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'a', '2026-06-10T04:29:59.999Z'), // 09:59 in India
        pageview(w, 'b', '2026-06-10T04:30:00.000Z'), // 10:00
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'hour', startAt: '2026-06-10', endAt: '2026-06-10' });
      expect(body.data).toHaveLength(24);
      expect(body.data[9]).toEqual({ name: '2026-06-10 09:00', timestamp: '2026-06-10T09:00:00.000+05:30', visitors: 1 });
      expect(body.data[10]).toEqual({ name: '2026-06-10 10:00', timestamp: '2026-06-10T10:00:00.000+05:30', visitors: 1 });
      const days = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'day', startAt: '2026-06-10', endAt: '2026-06-10' });
      expect(days.data).toEqual([{ name: '2026-06-10', timestamp: '2026-06-10T00:00:00.000+05:30', visitors: 2 }]);
    });

    it('starts weeks on Monday, counts a visitor once per week, and clips the first and last week to the range', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'a', '2026-03-03T17:00:00.000Z'), // Tuesday before the range
        pageview(w, 'a', '2026-03-04T17:00:00.000Z'), // Wednesday, week 10
        pageview(w, 'a', '2026-03-06T17:00:00.000Z'),
        pageview(w, 'a', '2026-03-10T16:00:00.000Z'), // week 11
        pageview(w, 'b', '2026-03-12T16:00:00.000Z'),
        pageview(w, 'c', '2026-03-17T16:00:00.000Z'), // Tuesday, week 12: the range's last day
        pageview(w, 'c', '2026-03-18T16:00:00.000Z'), // after the range
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors,pageviews', interval: 'week', startAt: '2026-03-04', endAt: '2026-03-17' });
      expect(body.data).toEqual([
        { name: '2026-W10', timestamp: '2026-03-02T00:00:00.000-05:00', visitors: 1, pageviews: 2 },
        { name: '2026-W11', timestamp: '2026-03-09T00:00:00.000-04:00', visitors: 2, pageviews: 2 },
        { name: '2026-W12', timestamp: '2026-03-16T00:00:00.000-04:00', visitors: 1, pageviews: 1 },
      ]);
      expect(body.totals).toEqual({ visitors: 3, pageviews: 5 });
    });

    it('counts a month series per local month, a visitor once per month', async () => {
      const { website, token } = await site(t, 'Asia/Tokyo');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'b', '2026-01-14T14:00:00.000Z'), // January 14, 23:00 in Tokyo: before the range
        pageview(w, 'b', '2026-01-14T16:00:00.000Z'), // January 15, 01:00
        pageview(w, 'a', '2026-01-31T14:59:59.999Z'), // January 31, 23:59
        pageview(w, 'a', '2026-01-31T15:00:00.000Z'), // February 1, 00:00
        pageview(w, 'a', '2026-02-10T03:00:00.000Z'),
        pageview(w, 'c', '2026-03-10T14:59:59.999Z'), // March 10, 23:59
        pageview(w, 'c', '2026-03-10T15:00:00.000Z'), // March 11: after the range
      ]);
      const body = await series(t, token, { websiteId: w, fields: 'visitors,pageviews', interval: 'month', startAt: '2026-01-15', endAt: '2026-03-10' });
      expect(body.data).toEqual([
        { name: '2026-01', timestamp: '2026-01-01T00:00:00.000+09:00', visitors: 2, pageviews: 2 },
        { name: '2026-02', timestamp: '2026-02-01T00:00:00.000+09:00', visitors: 1, pageviews: 2 },
        { name: '2026-03', timestamp: '2026-03-01T00:00:00.000+09:00', visitors: 1, pageviews: 1 },
      ]);
      expect(body.totals).toEqual({ visitors: 3, pageviews: 5 });
    });

    it('answers every bucket of the range, empty ones with zeros for every field', async () => {
      const { website, token } = await site(t, 'UTC');
      await writeAndDerive(t, [goal(website.id, 'a', '2026-05-03T10:00:00.000Z')]);
      await insertPayments(t, website.id, [{ amountMinor: 1250, occurredAt: '2026-05-03T11:00:00.000Z' }]);
      const body = await series(t, token, { websiteId: website.id, fields: ALL_FIELDS, interval: 'day', startAt: '2026-05-01', endAt: '2026-05-05' });
      const none = { new: 0, renewal: 0, refund: 0 };
      const zero = { visitors: 0, sessions: 0, pageviews: 0, revenue: 0, payments: 0, conversion_rate: 0, revenueBreakdown: none };
      expect(body.data).toEqual([
        { name: '2026-05-01', timestamp: '2026-05-01T00:00:00.000+00:00', ...zero },
        { name: '2026-05-02', timestamp: '2026-05-02T00:00:00.000+00:00', ...zero },
        {
          name: '2026-05-03',
          timestamp: '2026-05-03T00:00:00.000+00:00',
          visitors: 1,
          sessions: 1,
          pageviews: 0,
          revenue: 12.5,
          payments: 1,
          conversion_rate: 100,
          revenueBreakdown: { ...none, new: 12.5 },
        },
        { name: '2026-05-04', timestamp: '2026-05-04T00:00:00.000+00:00', ...zero },
        { name: '2026-05-05', timestamp: '2026-05-05T00:00:00.000+00:00', ...zero },
      ]);
      const hours = await series(t, token, { websiteId: website.id, fields: ALL_FIELDS, interval: 'hour', startAt: '2026-05-02', endAt: '2026-05-03' });
      expect(hours.data).toHaveLength(48);
      expect(hours.data.filter((point) => point.visitors === 0 && point.revenue === 0)).toHaveLength(46);
      expect(hours.data[34]).toMatchObject({ name: '2026-05-03 10:00', visitors: 1, payments: 0 });
      expect(hours.data[35]).toMatchObject({ name: '2026-05-03 11:00', visitors: 0, revenue: 12.5, payments: 1 });
    });

    it('reads an ISO instant exactly for hour series and as its local day for day series', async () => {
      const { website, token } = await site(t, 'Europe/Paris');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'a', '2026-06-10T07:10:00.000Z'), // 09:10 in Paris
        pageview(w, 'b', '2026-06-10T08:40:00.000Z'), // 10:40
        pageview(w, 'c', '2026-06-10T09:20:00.000Z'), // 11:20
      ]);
      const hours = await series(t, token, {
        websiteId: w,
        fields: 'pageviews',
        interval: 'hour',
        startAt: '2026-06-10T08:30:00Z',
        endAt: '2026-06-10T11:20:00+02:00',
      });
      expect(hours.data.map((p) => [p.name, p.pageviews])).toEqual([
        ['2026-06-10 10:00', 1],
        ['2026-06-10 11:00', 1],
      ]);
      const days = await series(t, token, { websiteId: w, fields: 'pageviews', interval: 'day', startAt: '2026-06-10T08:30:00Z', endAt: '2026-06-10T08:31:00Z' });
      expect(days.data).toEqual([{ name: '2026-06-10', timestamp: '2026-06-10T00:00:00.000+02:00', pageviews: 3 }]);
    });
  });

  describe('default ranges', () => {
    it('covers the last 24 hours, 30 days or 12 months up to now', async () => {
      const { website, token } = await site(t, 'UTC');
      const w = website.id;
      const now = Date.now();
      const ago = (ms: number) => new Date(now - ms).toISOString();
      const HOUR = 3_600_000;
      const DAY = 24 * HOUR;
      await writeAndDerive(t, [
        pageview(w, 'recent', ago(60_000)),
        pageview(w, 'yesterday', ago(25 * HOUR)),
        pageview(w, 'last-month', ago(40 * DAY)),
        pageview(w, 'last-year', ago(400 * DAY)),
      ]);
      const today = new Date(now).toISOString().slice(0, 10);
      const monthStart = new Date(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - 11, 1)).toISOString().slice(0, 7);

      const hours = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'hour' });
      expect(hours.data).toHaveLength(24);
      const lastHour = Date.parse(hours.data[23]!.timestamp);
      expect(lastHour).toBeLessThanOrEqual(now);
      expect(lastHour).toBeGreaterThan(now - HOUR);
      expect(hours.totals.visitors).toBe(1);

      const days = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'day' });
      expect(days.data).toHaveLength(30);
      expect(days.data[29]!.name).toBe(today);
      expect(days.data[0]!.name).toBe(new Date(Date.parse(`${today}T00:00:00Z`) - 29 * DAY).toISOString().slice(0, 10));
      expect(days.totals.visitors).toBe(2);

      const weeks = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'week' });
      expect(weeks.data.length).toBeGreaterThanOrEqual(5);
      expect(weeks.data.length).toBeLessThanOrEqual(6);
      expect(new Date(weeks.data[0]!.timestamp).getUTCDay()).toBe(1);
      expect(weeks.data[0]!.timestamp.slice(0, 10)).toBe(mondayOf(days.data[0]!.name));
      expect(weeks.totals.visitors).toBe(2);

      const months = await series(t, token, { websiteId: w, fields: 'visitors', interval: 'month' });
      expect(months.data).toHaveLength(12);
      expect(months.data[11]!.name).toBe(today.slice(0, 7));
      expect(months.data[0]!.name).toBe(monthStart);
      expect(months.totals.visitors).toBe(3);
    });
  });

  describe('metrics', () => {
    it('counts sessions by change of session id, pageviews, and the conversion rate as a percentage', async () => {
      const { website, token } = await site(t, 'UTC');
      const w = website.id;
      await writeAndDerive(t, [
        pageview(w, 'v1', '2026-06-01T10:00:00.000Z', { sessionId: 's1' }),
        pageview(w, 'v1', '2026-06-01T10:05:00.000Z', { sessionId: 's1' }),
        pageview(w, 'v1', '2026-06-01T15:00:00.000Z', { sessionId: 's2' }),
        goal(w, 'v1', '2026-06-01T15:01:00.000Z', { sessionId: 's2' }),
        pageview(w, 'v2', '2026-06-01T11:00:00.000Z', { sessionId: 's3' }),
        pageview(w, 'v3', '2026-06-01T12:00:00.000Z', { sessionId: 's4' }),
        goal(w, 'v4', '2026-06-01T13:00:00.000Z', { sessionId: null, source: 'api' }), // a server-side goal
        pageview(w, 'v1', '2026-06-02T09:00:00.000Z', { sessionId: 's5' }),
        goal(w, 'v2', '2026-06-03T09:00:00.000Z', { sessionId: 's6' }),
        pageview(w, 'v5', '2026-06-03T09:00:00.000Z', { sessionId: 's7' }),
        pageview(w, 'v6', '2026-06-03T09:00:00.000Z', { sessionId: 's8' }),
      ]);
      const query = { websiteId: w, fields: 'visitors,sessions,pageviews,conversion_rate', startAt: '2026-06-01', endAt: '2026-06-03' };
      const days = await series(t, token, { ...query, interval: 'day' });
      expect(days.data.map(({ name: _name, timestamp: _timestamp, ...values }) => values)).toEqual([
        { visitors: 4, sessions: 4, pageviews: 5, conversion_rate: 50 },
        { visitors: 1, sessions: 1, pageviews: 1, conversion_rate: 0 },
        { visitors: 3, sessions: 3, pageviews: 2, conversion_rate: 33.33 },
      ]);
      // Six visitors, three of whom converted; sessions and pageviews are sums.
      expect(days.totals).toEqual({ visitors: 6, sessions: 8, pageviews: 8, conversion_rate: 50 });
      const week = await series(t, token, { ...query, interval: 'week' });
      expect(week.data.map((p) => [p.visitors, p.conversion_rate])).toEqual([[6, 50]]);
      const hours = await series(t, token, { ...query, interval: 'hour' });
      expect(hours.totals).toEqual({ visitors: 6, sessions: 8, pageviews: 8, conversion_rate: 50 });
      expect(hours.data).toHaveLength(72);
    });

    it('sums revenue in the website currency, without refunds, other currencies or (when so set) renewals', async () => {
      const { website, token } = await site(t, 'UTC');
      const w = website.id;
      await insertPayments(t, w, [
        { amountMinor: 1999, occurredAt: '2026-04-10T10:00:00.000Z', visitorId: null },
        { amountMinor: 501, occurredAt: '2026-04-10T11:00:00.000Z', renewal: true, visitorId: 'v1' },
        { amountMinor: 1000, occurredAt: '2026-04-10T12:00:00.000Z', refunded: true },
        { amountMinor: 5000, occurredAt: '2026-04-10T13:00:00.000Z', currency: 'EUR' },
        { amountMinor: 300, occurredAt: '2026-04-11T23:59:59.999Z' },
        { amountMinor: 700, occurredAt: '2026-04-12T00:00:00.000Z' },
      ]);
      const query = { websiteId: w, fields: 'revenue,payments', interval: 'day', startAt: '2026-04-10', endAt: '2026-04-11' };
      const all = await series(t, token, query);
      expect(all.currency).toBe('USD');
      expect(all.data.map((p) => [p.revenue, p.payments])).toEqual([[25, 2], [3, 1]]);
      expect(all.totals).toEqual({ revenue: 28, payments: 3, revenueBreakdown: { new: 22.99, renewal: 5.01, refund: 10 } });
      expect(all.data.map((p: any) => p.revenueBreakdown)).toEqual([
        { new: 19.99, renewal: 5.01, refund: 10 },
        { new: 3, renewal: 0, refund: 0 },
      ]);

      await updateWebsite(t, token, w, { includeRenewalRevenue: false });
      const noRenewals = await series(t, token, query);
      expect(noRenewals.data.map((p) => [p.revenue, p.payments])).toEqual([[19.99, 1], [3, 1]]);
      expect(noRenewals.totals).toMatchObject({ revenue: 22.99, payments: 2 });

      await updateWebsite(t, token, w, { currency: 'EUR' });
      const euros = await series(t, token, { ...query, interval: 'month' });
      expect(euros.currency).toBe('EUR');
      expect(euros.data.map((p) => [p.name, p.revenue, p.payments])).toEqual([['2026-04', 50, 1]]);
    });

    it('reads amounts in the minor unit of the currency (no decimals for JPY)', async () => {
      const { website, token } = await site(t, 'Asia/Tokyo');
      await updateWebsite(t, token, website.id, { currency: 'JPY' });
      await insertPayments(t, website.id, [{ amountMinor: 1500, occurredAt: '2026-04-10T01:00:00.000Z', currency: 'JPY' }]);
      const body = await series(t, token, { websiteId: website.id, fields: 'revenue', interval: 'day', startAt: '2026-04-10', endAt: '2026-04-10' });
      expect(body.data).toEqual([
        { name: '2026-04-10', timestamp: '2026-04-10T00:00:00.000+09:00', revenue: 1500, revenueBreakdown: { new: 1500, renewal: 0, refund: 0 } },
      ]);
    });

    it('keeps the events of two websites written in one batch apart', async () => {
      const first = await site(t, 'UTC');
      const second = await site(t, 'UTC');
      await writeAndDerive(t, [
        pageview(first.website.id, 'shared-visitor', '2026-07-01T10:00:00.000Z'),
        pageview(second.website.id, 'shared-visitor', '2026-07-01T10:00:00.000Z'),
        pageview(second.website.id, 'other', '2026-07-01T10:00:00.000Z'),
      ]);
      const query = { fields: 'visitors,pageviews', interval: 'day', startAt: '2026-07-01', endAt: '2026-07-01' };
      expect((await series(t, first.token, { ...query, websiteId: first.website.id })).totals).toEqual({ visitors: 1, pageviews: 1 });
      expect((await series(t, second.token, { ...query, websiteId: second.website.id })).totals).toEqual({ visitors: 2, pageviews: 2 });
    });
  });

  // Tens of batches, each shipped to ClickHouse with its session rows in one relay turn of its own.
  describe('rollups', { timeout: 90_000 }, () => {
    // Deterministic pseudo-random events over ~70 days, written in shuffled batches so that days
    // arrive out of order (late events), then checked against an oracle and the raw events.
    // One session per visitor and local day, so session counts do not depend on arrival order.
    function randomEvents(websiteId: string, seed: number, timezone: string): NewEvent[] {
      let state = seed;
      const random = () => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state / 2 ** 31;
      };
      const start = Date.parse('2026-02-20T00:00:00.000Z');
      const events: NewEvent[] = [];
      for (let i = 0; i < 400; i++) {
        const visitor = `v${Math.floor(random() * 25)}`;
        const occurredAt = new Date(start + Math.floor(random() * 70 * 24) * 3_600_000 + Math.floor(random() * 3_600_000)).toISOString();
        const sessionId = `${visitor}-${localDay(occurredAt, timezone)}`;
        events.push(random() < 0.15 ? goal(websiteId, visitor, occurredAt, { sessionId }) : pageview(websiteId, visitor, occurredAt, { sessionId }));
      }
      for (let i = events.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [events[i], events[j]] = [events[j]!, events[i]!];
      }
      return events;
    }

    async function writeInBatches(events: NewEvent[], size: number) {
      for (let i = 0; i < events.length; i += size) await writeAndDerive(t, events.slice(i, i + size));
    }

    function oracle(events: NewEvent[], timezone: string, keyOf: (day: string) => string, first: string, last: string) {
      const buckets = new Map<string, { visitors: Set<string>; converted: Set<string>; pageviews: number }>();
      const all = { visitors: new Set<string>(), converted: new Set<string>(), pageviews: 0 };
      for (const event of events) {
        const day = localDay(event.occurredAt, timezone);
        if (day < first || day > last) continue;
        const key = keyOf(day);
        const bucket = buckets.get(key) ?? { visitors: new Set(), converted: new Set(), pageviews: 0 };
        for (const target of [bucket, all]) {
          target.visitors.add(event.visitorId);
          if (event.type === 'custom') target.converted.add(event.visitorId);
          if (event.type === 'pageview') target.pageviews += 1;
        }
        buckets.set(key, bucket);
      }
      const rate = (b: { visitors: Set<string>; converted: Set<string> }) =>
        b.visitors.size === 0 ? 0 : Math.round((b.converted.size / b.visitors.size) * 10_000) / 100;
      return {
        buckets: new Map([...buckets].map(([key, b]) => [key, { visitors: b.visitors.size, pageviews: b.pageviews, conversion_rate: rate(b) }])),
        totals: { visitors: all.visitors.size, pageviews: all.pageviews, conversion_rate: rate(all) },
      };
    }

    const KEYS = { day: (day: string) => day, week: mondayOf, month: (day: string) => day.slice(0, 7) };

    /** `asked`: the zone is passed as ?timezone= (the raw events answer) rather than being the website's. */
    async function expectMatchesOracle(token: string, websiteId: string, events: NewEvent[], timezone: string, asked = false) {
      for (const interval of ['day', 'week', 'month'] as const) {
        const query = {
          websiteId,
          fields: 'visitors,pageviews,conversion_rate',
          interval,
          startAt: '2026-02-25',
          endAt: '2026-04-20',
          ...(asked ? { timezone } : {}),
        };
        const body = await series(t, token, query);
        const expected = oracle(events, timezone, KEYS[interval], '2026-02-25', '2026-04-20');
        // Canonical names are answered as given (Asia/Kathmandu, not ICU's Asia/Katmandu).
        expect(body.timezone).toBe(timezone);
        expect(body.totals, interval).toEqual(expected.totals);
        for (const point of body.data) {
          const key = interval === 'month' ? point.name : point.timestamp.slice(0, 10);
          const values = { visitors: point.visitors, pageviews: point.pageviews, conversion_rate: point.conversion_rate };
          expect(values, `${interval} ${point.name}`).toEqual(expected.buckets.get(key) ?? { visitors: 0, pageviews: 0, conversion_rate: 0 });
        }
      }
    }

    it('agree with the raw events when days arrive out of order', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const events = randomEvents(website.id, 42, 'America/New_York');
      await writeInBatches(events, 37);
      await expectMatchesOracle(token, website.id, events, 'America/New_York');
      await expectMatchesOracle(token, website.id, events, 'Asia/Tokyo', true);
      // The same buckets counted from the raw events (a zone with New York's rules since 1975).
      for (const interval of ['day', 'week', 'month']) {
        const query = { websiteId: website.id, fields: 'visitors,sessions,pageviews,conversion_rate', interval, startAt: '2026-02-25', endAt: '2026-04-20' };
        const fromRollups = await series(t, token, query);
        const fromEvents = await series(t, token, { ...query, timezone: 'America/Detroit' });
        expect(fromEvents.timezone).toBe('America/Detroit');
        expect(fromEvents.data).toEqual(fromRollups.data);
        expect(fromEvents.totals).toEqual(fromRollups.totals);
      }
    });

    it('are rebuilt in the new time zone when the website changes it', async () => {
      const { website, token } = await site(t, 'America/New_York');
      const events = randomEvents(website.id, 7, 'America/New_York');
      await writeInBatches(events, 100);
      await updateWebsite(t, token, website.id, { timezone: 'Asia/Kathmandu' }); // +05:45
      await expectMatchesOracle(token, website.id, events, 'Asia/Kathmandu');
      await updateWebsite(t, token, website.id, { timezone: 'Pacific/Honolulu' });
      await expectMatchesOracle(token, website.id, events, 'Pacific/Honolulu');
    });

    // ClickHouse keeps no day rollups to compare: it derives them from the raw events at read time.
    itWithRelationalRollups(engine)('written batch by batch equal a rebuild from the raw events', async () => {
      const { website } = await site(t, 'Europe/Paris');
      await writeInBatches(randomEvents(website.id, 99, 'Europe/Paris'), 13);
      const snapshot = async () => ({
        visitorDays: await t.db.selectFrom('visitor_days').selectAll().where('website_id', '=', website.id).orderBy('day').orderBy('visitor_id').execute(),
        totals: await t.db.selectFrom('daily_totals').selectAll().where('website_id', '=', website.id).orderBy('day').execute(),
        recency: (
          await t.db
            .withTables<{ visitor_recency: { website_id: string; day: string; prev_day: string; visitors: number; converted: number } }>()
            .selectFrom('visitor_recency')
            .selectAll()
            .where('website_id', '=', website.id)
            .orderBy('day')
            .orderBy('prev_day')
            .execute()
        ).filter((row) => row.visitors !== 0 || row.converted !== 0),
      });
      const incremental = await snapshot();
      expect(incremental.visitorDays.length).toBeGreaterThan(100);
      await t.db.transaction().execute((trx) => rebuildDailyRollups(trx, website.id, 'Europe/Paris'));
      expect(await snapshot()).toEqual(incremental);
    });
  });

  describe('access', () => {
    const query = (websiteId?: string) => ({ ...(websiteId ? { websiteId } : {}), fields: 'visitors', interval: 'day' });

    it("answers a website's df_ key without websiteId, and with its own id", async () => {
      const { website, token } = await site(t, 'UTC');
      const key = await createApiKey(t, token, website.id);
      await writeAndDerive(t, [pageview(website.id, 'a', new Date().toISOString())]);
      const withoutId = await series(t, key.key, query());
      expect(withoutId.totals).toEqual({ visitors: 1 });
      expect((await series(t, key.key, query(website.id))).totals).toEqual({ visitors: 1 });
    });

    it("answers 403 for a df_ key naming another website", async () => {
      const { token } = await site(t, 'UTC');
      const first = await createWebsite(t, token);
      const second = await createWebsite(t, token);
      const key = await createApiKey(t, token, first.id);
      expectError(await t.request('GET', URL, { token: key.key, query: query(second.id) }), 403, /another website/);
    });

    it('answers 401 without a credential or with an unknown one', async () => {
      const { website } = await site(t, 'UTC');
      expectError(await t.request('GET', URL, { query: query(website.id) }), 401);
      expectError(await t.request('GET', URL, { token: 'dft_nope', query: query(website.id) }), 401);
    });

    it('answers 404 for a website of another account and for an unknown website', async () => {
      const { website } = await site(t, 'UTC');
      const stranger = await createAccount(t);
      expectError(await t.request('GET', URL, { token: stranger.token, query: query(website.id) }), 404);
      expectError(await t.request('GET', URL, { token: stranger.token, query: query(UNKNOWN_ID) }), 404);
    });

    it('answers 403 without analytics:read or for a token limited to other websites', async () => {
      const { owner, website } = await site(t, 'UTC');
      const other = await createWebsite(t, owner.token);
      const noPermission = await createToken(t, owner, ['websites:read', 'settings:read']);
      expectError(await t.request('GET', URL, { token: noPermission, query: query(website.id) }), 403, /analytics:read/);
      const elsewhere = await createToken(t, owner, ['analytics:read'], [other.id]);
      expectError(await t.request('GET', URL, { token: elsewhere, query: query(website.id) }), 403, /not allowed/);
    });

    it('lets a viewer and a token with analytics:read alone read the series', async () => {
      const { owner, website } = await site(t, 'UTC');
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expect((await series(t, viewer.token, query(website.id))).data).toHaveLength(30);
      const narrow = await createToken(t, owner, ['analytics:read'], [website.id]);
      expect((await series(t, narrow, query(website.id))).data).toHaveLength(30);
    });

    it('checks 401, then 404, then 403 before the query', async () => {
      const { owner, website } = await site(t, 'UTC');
      const stranger = await createAccount(t);
      const bad = { websiteId: website.id, fields: 'nope', interval: 'year' };
      expectError(await t.request('GET', URL, { query: bad }), 401);
      expectError(await t.request('GET', URL, { token: stranger.token, query: bad }), 404);
      const noPermission = await createToken(t, owner, ['settings:read']);
      expectError(await t.request('GET', URL, { token: noPermission, query: bad }), 403);
      expectError(await t.request('GET', URL, { token: owner.token, query: bad }), 400);
    });
  });

  describe('bad input', () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['websiteId missing with an account token', { fields: 'visitors', interval: 'day' }, /query\.websiteId: is required/],
      ['a malformed websiteId', { websiteId: 'nope', fields: 'visitors', interval: 'day' }, /query\.websiteId/],
      ['fields missing', { interval: 'day' }, /query\.fields/],
      ['an unknown field', { fields: 'visitors,bounce_rate', interval: 'day' }, /query\.fields: "bounce_rate" is not a field/],
      ['an empty field name', { fields: 'visitors,', interval: 'day' }, /query\.fields: an empty name/],
      ['a field name that could be a secret', { fields: 'dft_Abc123XYZ', interval: 'day' }, /query\.fields: an unknown name/],
      ['interval missing', { fields: 'visitors' }, /query\.interval/],
      ['an unknown interval', { fields: 'visitors', interval: 'year' }, /query\.interval: must be one of/],
      ['startAt without endAt', { fields: 'visitors', interval: 'day', startAt: '2026-01-01' }, /query\.endAt: is required/],
      ['endAt without startAt', { fields: 'visitors', interval: 'day', endAt: '2026-01-01' }, /query\.startAt: is required/],
      ['a day that does not exist', { fields: 'visitors', interval: 'day', startAt: '2026-02-30', endAt: '2026-03-01' }, /query\.startAt: must be/],
      ['a word for a day', { fields: 'visitors', interval: 'day', startAt: '2026-01-01', endAt: 'today' }, /query\.endAt: must be/],
      ['endAt before startAt', { fields: 'visitors', interval: 'day', startAt: '2026-03-02', endAt: '2026-03-01' }, /query\.endAt: must not be before/],
      ['too many buckets', { fields: 'visitors', interval: 'hour', startAt: '2026-01-01', endAt: '2026-12-31' }, /query\.endAt: the range holds more than 1500 hour buckets/],
      ['an unknown time zone', { fields: 'visitors', interval: 'day', timezone: 'Mars/Olympus' }, /query\.timezone/],
      ['a bad limit', { fields: 'visitors', interval: 'day', limit: '0' }, /query\.limit/],
      ['an unknown filter', { fields: 'visitors', interval: 'day', filter_colour: 'red' }, /query\.filter_colour/],
    ];
    for (const [what, params, pattern] of cases) {
      it(`answers 400 for ${what}`, async () => {
        const { website, token } = await site(t, 'UTC');
        const query = what.startsWith('websiteId') ? params : { websiteId: website.id, ...params };
        expectError(await t.request('GET', URL, { token, query }), 400, pattern);
      });
    }
  });
});
