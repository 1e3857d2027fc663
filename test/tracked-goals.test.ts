import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
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

const ITEM_KEYS = ['color', 'completions', 'description', 'displayName', 'goalName', 'lastCompletedAt', 'visitors'];
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const visitor = () => `visitor-${randomBytes(6).toString('hex')}`;

const goalsUrl = (websiteId: string, query = '') => `/api/v1/admin/websites/${websiteId}/goals${query}`;
const websiteUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}`;

function event(websiteId: string, type: NewEvent['type'], name: string | null, visitorId: string, occurredAt: string): NewEvent {
  return newEvent(websiteId, visitorId, { type, name, path: type === 'pageview' ? '/' : null, occurredAt });
}

const goal = (websiteId: string, name: string, visitorId: string, occurredAt = new Date().toISOString()) =>
  event(websiteId, 'custom', name, visitorId, occurredAt);

describeEachEventEngine('tracked goals', (engine) => {
  const t: TestApp = useTestApp(engine);

  async function ownerWithWebsite() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  async function list(token: string, websiteId: string, query = '') {
    const response = await t.request('GET', goalsUrl(websiteId, query), { token });
    expect(response.status, response.raw).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'status']);
    expect(response.body.status).toBe('success');
    return response.body.data as Record<string, unknown>[];
  }

  describe('the all-time list', () => {
    it('is empty for a website without goals, pageviews and other events not counting', async () => {
      const { owner, website } = await ownerWithWebsite();
      const v = visitor();
      await t.app.events.write([event(website.id, 'pageview', null, v, new Date().toISOString()), event(website.id, 'identify', null, v, new Date().toISOString())]);
      expect(await list(owner.token, website.id)).toEqual([]);
    });

    it('lists goals by completions, most first, ties in code-point order of the name, with distinct visitors and the last completion', async () => {
      const { owner, website } = await ownerWithWebsite();
      const other = await createWebsite(t, owner.token);
      const [a, b, c] = [visitor(), visitor(), visitor()];
      // One batch and several writes: the rollup adds up across transactions and inside one.
      await t.app.events.write([
        goal(website.id, 'signup', a, '2026-04-01T10:00:00.000Z'),
        goal(website.id, 'signup', a, '2026-04-03T10:00:00.000Z'),
        goal(website.id, 'checkout_paid', b, '2026-04-02T09:00:00.000Z'),
        goal(website.id, 'checkout-start', c, '2026-04-02T08:00:00.000Z'),
      ]);
      await t.app.events.write([goal(website.id, 'signup', b, '2026-04-02T10:00:00.000Z')]);
      await t.app.events.write([goal(website.id, 'checkout:done', a, '2026-04-05T10:00:00.000Z')]);
      await t.app.events.write([goal(website.id, 'signup', a, '2026-03-01T10:00:00.000Z')]); // late, older event
      await t.app.events.write([goal(other.id, 'elsewhere', a), goal(other.id, 'elsewhere', b), goal(other.id, 'elsewhere', c)]);

      const data = await list(owner.token, website.id);
      for (const item of data) expect(Object.keys(item).sort()).toEqual(ITEM_KEYS);
      expect(data).toEqual([
        { goalName: 'signup', completions: 4, visitors: 2, lastCompletedAt: '2026-04-03T10:00:00.000Z', displayName: null, color: null, description: null },
        { goalName: 'checkout-start', completions: 1, visitors: 1, lastCompletedAt: '2026-04-02T08:00:00.000Z', displayName: null, color: null, description: null },
        { goalName: 'checkout:done', completions: 1, visitors: 1, lastCompletedAt: '2026-04-05T10:00:00.000Z', displayName: null, color: null, description: null },
        { goalName: 'checkout_paid', completions: 1, visitors: 1, lastCompletedAt: '2026-04-02T09:00:00.000Z', displayName: null, color: null, description: null },
      ]);
      expect((await list(owner.token, other.id)).map((item) => [item.goalName, item.completions, item.visitors])).toEqual([['elsewhere', 3, 3]]);
    });

    it('merges display customizations by goal name, and lists no goal that was only customized', async () => {
      const { owner, website } = await ownerWithWebsite();
      await t.app.events.write([goal(website.id, 'signup', visitor(), '2026-04-01T10:00:00.000Z'), goal(website.id, 'purchase', visitor(), '2026-04-01T11:00:00.000Z')]);
      const patch = async (body: Record<string, unknown>) => {
        const response = await t.request('PATCH', `${goalsUrl(website.id)}/customizations`, { token: owner.token, body });
        expect(response.status, response.raw).toBe(200);
      };
      await patch({ goalName: 'signup', displayName: 'Sign-up', color: '#22c55e', description: 'A visitor created an account' });
      await patch({ goalName: 'purchase', color: '#ef4444' });
      await patch({ goalName: 'never_tracked', displayName: 'Never' });

      expect(await list(owner.token, website.id)).toEqual([
        { goalName: 'purchase', completions: 1, visitors: 1, lastCompletedAt: '2026-04-01T11:00:00.000Z', displayName: null, color: '#ef4444', description: null },
        {
          goalName: 'signup',
          completions: 1,
          visitors: 1,
          lastCompletedAt: '2026-04-01T10:00:00.000Z',
          displayName: 'Sign-up',
          color: '#22c55e',
          description: 'A visitor created an account',
        },
      ]);
      // The customization routes beside it still answer.
      const customizations = await t.request('GET', `${goalsUrl(website.id)}/customizations`, { token: owner.token });
      expect(customizations.status).toBe(200);
      expect(customizations.body.data.map((item: { goalName: string }) => item.goalName)).toEqual(['never_tracked', 'purchase', 'signup']);
    });

    it('lists goals sent through POST /api/v1/goals', async () => {
      const { owner, website } = await ownerWithWebsite();
      const key = await createApiKey(t, owner.token, website.id);
      const v = visitor();
      await t.app.events.write([event(website.id, 'pageview', null, v, new Date().toISOString())]);
      const sent = await t.request('POST', '/api/v1/goals', { token: key.key, body: { visitorId: v, name: 'demo_booked' } });
      expect(sent.status, sent.raw).toBe(200);
      const data = await list(key.key, website.id);
      expect(data).toEqual([expect.objectContaining({ goalName: 'demo_booked', completions: 1, visitors: 1 })]);
    });

    it('keeps the rollup equal to a count over the raw events', async () => {
      const { owner, website } = await ownerWithWebsite();
      const visitors = [visitor(), visitor(), visitor(), visitor()];
      const names = ['a', 'b', 'c'];
      for (let round = 0; round < 5; round++) {
        const batch = Array.from({ length: 7 }, (_, i) => goal(website.id, names[(round + i) % 3]!, visitors[(round * i) % 4]!, new Date(Date.UTC(2026, 3, 1, round, i)).toISOString()));
        await Promise.all([t.app.events.write(batch.slice(0, 3)), t.app.events.write(batch.slice(3))]);
      }
      const raw = await t.storedEvents(website.id);
      const expected = names
        .map((name) => {
          const rows = raw.filter((row) => row.name === name);
          return {
            goalName: name,
            completions: rows.length,
            visitors: new Set(rows.map((row) => row.visitor_id)).size,
            lastCompletedAt: rows.map((row) => new Date(row.occurred_at).toISOString()).sort().at(-1),
          };
        })
        .sort((x, y) => y.completions - x.completions || (x.goalName < y.goalName ? -1 : 1));
      const data = await list(owner.token, website.id);
      expect(data.map(({ goalName, completions, visitors: v, lastCompletedAt }) => ({ goalName, completions, visitors: v, lastCompletedAt }))).toEqual(expected);
      // The same numbers over a period that holds every event.
      const ranged = await list(owner.token, website.id, '?startAt=2026-03-01&endAt=2026-05-01');
      expect(ranged).toEqual(data);
    });
  });

  describe('over a period', () => {
    it("counts whole days in the website's time zone, both days included", async () => {
      const { owner, website } = await ownerWithWebsite(); // Europe/Paris: UTC+2 in May
      const [a, b] = [visitor(), visitor()];
      await t.app.events.write([
        goal(website.id, 'signup', a, '2026-05-01T21:59:59.999Z'), // 2026-05-01 23:59:59.999 in Paris
        goal(website.id, 'signup', a, '2026-05-01T22:00:00.000Z'), // 2026-05-02 00:00 in Paris
        goal(website.id, 'signup', b, '2026-05-03T21:59:59.999Z'), // 2026-05-03 23:59:59.999 in Paris
        goal(website.id, 'purchase', b, '2026-05-03T22:00:00.000Z'), // 2026-05-04 in Paris
        goal(website.id, 'purchase', a, '2026-05-02T12:00:00.000Z'),
        goal(website.id, 'purchase', b, '2026-05-02T13:00:00.000Z'),
      ]);
      expect(await list(owner.token, website.id, '?startAt=2026-05-02&endAt=2026-05-03')).toEqual([
        { goalName: 'purchase', completions: 2, visitors: 2, lastCompletedAt: '2026-05-02T13:00:00.000Z', displayName: null, color: null, description: null },
        { goalName: 'signup', completions: 2, visitors: 2, lastCompletedAt: '2026-05-03T21:59:59.999Z', displayName: null, color: null, description: null },
      ]);
      expect(await list(owner.token, website.id, '?startAt=2026-05-02&endAt=2026-05-02')).toEqual([
        expect.objectContaining({ goalName: 'purchase', completions: 2 }),
        expect.objectContaining({ goalName: 'signup', completions: 1, visitors: 1, lastCompletedAt: '2026-05-01T22:00:00.000Z' }),
      ]);
      // All time, the rollup still counts everything.
      expect((await list(owner.token, website.id)).map((item) => [item.goalName, item.completions])).toEqual([
        ['purchase', 3],
        ['signup', 3],
      ]);
    });

    it('follows the website time zone through a daylight-saving day and a time-zone change', async () => {
      const { owner, website } = await ownerWithWebsite();
      const v = visitor();
      await t.app.events.write([
        goal(website.id, 'early', v, '2026-03-28T22:59:59.999Z'), // 2026-03-28 23:59:59.999 in Paris (UTC+1)
        goal(website.id, 'in_day', v, '2026-03-28T23:00:00.000Z'), // 2026-03-29 00:00 in Paris
        goal(website.id, 'in_day', v, '2026-03-29T21:59:59.999Z'), // 2026-03-29 23:59:59.999 in Paris (UTC+2): a 23-hour day
        goal(website.id, 'late', v, '2026-03-29T22:00:00.000Z'), // 2026-03-30 in Paris
      ]);
      const names = async () => (await list(owner.token, website.id, '?startAt=2026-03-29&endAt=2026-03-29')).map((item) => [item.goalName, item.completions]);
      expect(await names()).toEqual([['in_day', 2]]);

      const moved = await t.request('PUT', websiteUrl(website.id), { token: owner.token, body: { timezone: 'America/New_York' } });
      expect(moved.status, moved.raw).toBe(200);
      // 2026-03-29 in New York (UTC-4) is 04:00Z to 04:00Z the next day.
      expect(await names()).toEqual([
        ['in_day', 1],
        ['late', 1],
      ]);
    });

    it('takes ISO instants, both included, and mixes them with days', async () => {
      const { owner, website } = await ownerWithWebsite();
      const v = visitor();
      await t.app.events.write([
        goal(website.id, 'a', v, '2026-05-01T10:00:00.000Z'),
        goal(website.id, 'b', v, '2026-05-01T11:00:00.000Z'),
        goal(website.id, 'c', v, '2026-05-01T12:00:00.000Z'),
      ]);
      const names = async (query: string) => (await list(owner.token, website.id, query)).map((item) => item.goalName);
      expect(await names('?startAt=2026-05-01T10:00:00.000Z&endAt=2026-05-01T11:00:00.000Z')).toEqual(['a', 'b']);
      expect(await names('?startAt=2026-05-01T10:00:00.001Z&endAt=2026-05-01T12:00:00Z')).toEqual(['b', 'c']);
      expect(await names(`?startAt=${encodeURIComponent('2026-05-01T13:00:00+02:00')}&endAt=2026-05-01`)).toEqual(['b', 'c']);
      expect(await names(`?startAt=${encodeURIComponent('2026-05-01T13:00:00.001+02:00')}&endAt=2026-05-01`)).toEqual(['c']);
      expect(await names('?startAt=2026-05-02&endAt=2026-05-09')).toEqual([]);
    });

    const badRanges: [string, string, RegExp][] = [
      ['startAt alone', '?startAt=2026-05-01', /query\.endAt: is required when startAt is given/],
      ['endAt alone', '?endAt=2026-05-01', /query\.startAt: is required when endAt is given/],
      ['a day that does not exist', '?startAt=2026-02-30&endAt=2026-03-01', /query\.startAt: must be a YYYY-MM-DD day or an ISO-8601 instant/],
      ['an instant without a time zone', '?startAt=2026-05-01T10:00:00&endAt=2026-05-02', /query\.startAt/],
      ['words', '?startAt=2026-05-01&endAt=tomorrow', /query\.endAt: must be a YYYY-MM-DD day/],
      ['an end before the start', '?startAt=2026-05-02&endAt=2026-05-01', /query\.endAt: must not be before startAt/],
      ['an unknown parameter', '?since=2026-05-01', /query\.since: is not an allowed field/],
    ];
    for (const [label, query, pattern] of badRanges) {
      it(`answers 400 for ${label}`, async () => {
        const { owner, website } = await ownerWithWebsite();
        expectError(await t.request('GET', goalsUrl(website.id, query), { token: owner.token }), 400, pattern);
      });
    }
  });

  describe('access', () => {
    it('answers 401 without a credential', async () => {
      const { website } = await ownerWithWebsite();
      const response = await t.request('GET', goalsUrl(website.id));
      expectError(response, 401);
      expect(String(response.headers['www-authenticate'])).toMatch(/^Bearer/);
    });

    it('needs settings:read: goals:read alone is refused with 403', async () => {
      const { owner, website } = await ownerWithWebsite();
      expectError(await t.request('GET', goalsUrl(website.id), { token: await createToken(t, owner, ['goals:read']) }), 403, /settings:read/);
      expectError(await t.request('GET', goalsUrl(website.id), { token: await createToken(t, owner, allBut('settings:read')) }), 403, /settings:read/);
      expect((await t.request('GET', goalsUrl(website.id), { token: await createToken(t, owner, ['settings:read']) })).status).toBe(200);
    });

    it('answers 403 for a token limited to another website and a df_ key of another website', async () => {
      const { owner, website } = await ownerWithWebsite();
      const otherSite = await createWebsite(t, owner.token);
      expectError(await t.request('GET', goalsUrl(website.id), { token: await createToken(t, owner, ['settings:read'], [otherSite.id]) }), 403, /not allowed/);
      const otherKey = await createApiKey(t, owner.token, otherSite.id);
      expectError(await t.request('GET', goalsUrl(website.id), { token: otherKey.key }), 403, /another website/);
    });

    it('lets a viewer and the website df_ key read the list', async () => {
      const { owner, website } = await ownerWithWebsite();
      await t.app.events.write([goal(website.id, 'signup', visitor(), '2026-04-01T10:00:00.000Z')]);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const key = await createApiKey(t, owner.token, website.id);
      for (const token of [viewer.token, key.key]) {
        expect((await list(token, website.id)).map((item) => item.goalName)).toEqual(['signup']);
      }
    });

    it("answers 404 for another account's website and an unknown one, before checking the query", async () => {
      const { website } = await ownerWithWebsite();
      const stranger = await createAccount(t);
      expectError(await t.request('GET', goalsUrl(website.id), { token: stranger.token }), 404);
      expectError(await t.request('GET', goalsUrl(website.id, '?startAt=nope'), { token: stranger.token }), 404);
      expectError(await t.request('GET', goalsUrl(UNKNOWN_ID), { token: stranger.token }), 404);
    });
  });

  describe('the website kpi', () => {
    it('accepts only a goal the website has tracked, and null still clears it', async () => {
      const { owner, website } = await ownerWithWebsite();
      const before = await t.request('GET', websiteUrl(website.id), { token: owner.token });

      const refused = await t.request('PUT', websiteUrl(website.id), { token: owner.token, body: { kpi: 'signup', name: 'Renamed' } });
      expectError(refused, 400, /^body\.kpi: must be a goal this website has tracked/);
      const unchanged = await t.request('GET', websiteUrl(website.id), { token: owner.token });
      expect(unchanged.body.data[0]).toEqual(before.body.data[0]);

      await t.app.events.write([goal(website.id, 'signup', visitor())]);
      const accepted = await t.request('PUT', websiteUrl(website.id), { token: owner.token, body: { kpi: 'signup' } });
      expect(accepted.status, accepted.raw).toBe(200);
      expect(accepted.body.data[0].kpi).toBe('signup');

      const cleared = await t.request('PUT', websiteUrl(website.id), { token: owner.token, body: { kpi: null } });
      expect(cleared.status, cleared.raw).toBe(200);
      expect(cleared.body.data[0].kpi).toBeNull();
      const stored = await t.db.selectFrom('websites').select('kpi').where('id', '=', website.id).executeTakeFirstOrThrow();
      expect(stored.kpi).toBeNull();
    });

    it('refuses a goal tracked only on another website', async () => {
      const { owner, website } = await ownerWithWebsite();
      const otherSite = await createWebsite(t, owner.token);
      await t.app.events.write([goal(otherSite.id, 'signup', visitor())]);
      expectError(await t.request('PUT', websiteUrl(website.id), { token: owner.token, body: { kpi: 'signup' } }), 400, /body\.kpi/);
      const stored = await t.db.selectFrom('websites').select('kpi').where('id', '=', website.id).executeTakeFirstOrThrow();
      expect(stored.kpi).toBeNull();
    });

    it('accepts a goal tracked only before the present period (goals are tracked for good)', async () => {
      const { owner, website } = await ownerWithWebsite();
      await t.app.events.write([goal(website.id, 'old_goal', visitor(), '2021-01-01T00:00:00.000Z')]);
      const response = await t.request('PUT', websiteUrl(website.id), { token: owner.token, body: { kpi: 'old_goal' } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].kpi).toBe('old_goal');
    });
  });
});
