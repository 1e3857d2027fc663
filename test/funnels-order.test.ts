import { beforeAll, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { newEvent, ownerWithWebsite } from './helpers/factories.ts';

// Sightline's funnel rule on every engine: step n is reached by a matching event at or after the
// instant step n-1 was reached, to the millisecond. So two steps at the same instant both count
// whatever order they were written in (ClickHouse's windowFunnel orders such ties as the rows
// come), one event can be two consecutive steps that it matches, and a step a few hundred
// milliseconds before the previous one within the same second does not count (a count in whole
// seconds would), over a 30-day range and over one longer than 49.7 days (2^32 ms, beyond which
// windowFunnel's UInt32 timestamp cannot hold milliseconds).

const AT = Date.parse('2026-03-10T12:00:00.500Z');
const iso = (ms: number) => new Date(ms).toISOString();

describeEachEventEngine('funnel steps in time order', (engine) => {
  const t = useTestApp(engine);
  let token: string;
  let websiteId: string;
  let pricingThenSignup: string;
  let pricingTwice: string;

  const funnelOf = async (steps: unknown[]) => {
    const response = await t.request('POST', `/api/v1/admin/websites/${websiteId}/funnels`, { token, body: { name: `F${steps.length}-${Math.random()}`, steps } });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0].id as string;
  };

  const event = (visitorId: string, ms: number, step: 'pricing' | 'signup' | 'docs'): NewEvent =>
    newEvent(websiteId, visitorId, {
      sessionId: `s-${visitorId}`,
      occurredAt: iso(ms),
      ...(step === 'signup' ? { type: 'custom', name: 'signup', path: '/pricing' } : { path: `/${step}` }),
    });

  beforeAll(async () => {
    const { owner, website } = await ownerWithWebsite(t);
    token = owner.token;
    websiteId = website.id;
    pricingThenSignup = await funnelOf([
      { type: 'pageview', url: '/pricing' },
      { type: 'goal', goalName: 'signup' },
    ]);
    pricingTwice = await funnelOf([
      { type: 'pageview', url: '/docs' },
      { type: 'pageview', url: '/pricing' },
      { type: 'pageview', url: '/pricing' },
    ]);
    // Each write is its own batch (on ClickHouse its own INSERT), in the order listed.
    const writes: NewEvent[][] = [
      // Same instant, the later step written first, then the earlier one: both steps.
      [event('tie-goal-first', AT + 1000, 'signup')],
      [event('tie-goal-first', AT + 1000, 'pricing')],
      // Same instant, in step order: both steps.
      [event('tie-page-first', AT + 2000, 'pricing')],
      [event('tie-page-first', AT + 2000, 'signup')],
      // Same instant in one batch, the later step first: both steps.
      [event('tie-one-batch', AT + 3000, 'signup'), event('tie-one-batch', AT + 3000, 'pricing')],
      // The goal a millisecond before the page, nothing after: the first step only.
      [event('goal-1ms-before', AT + 4000, 'pricing'), event('goal-1ms-before', AT + 3999, 'signup')],
      // The goal 300 ms before the page, in the same second (…:04.600 and …:04.900): the first step only.
      [event('goal-300ms-before', AT + 4400, 'pricing'), event('goal-300ms-before', AT + 4100, 'signup')],
      // A goal long before, and one after: both steps.
      [event('goal-after', AT + 5000, 'signup'), event('goal-after', AT + 6000, 'pricing'), event('goal-after', AT + 7000, 'signup')],
      // One /pricing view after /docs: steps 2 and 3 of docs → pricing → pricing, from one event.
      [event('one-view-two-steps', AT + 8000, 'docs'), event('one-view-two-steps', AT + 9000, 'pricing')],
      // /pricing at the same instant as /docs: still after it, so all three steps.
      [event('view-tie', AT + 10_000, 'pricing')],
      [event('view-tie', AT + 10_000, 'docs')],
      // /pricing 200 ms before /docs: no second step.
      [event('view-before', AT + 11_200, 'docs'), event('view-before', AT + 11_000, 'pricing')],
    ];
    for (const batch of writes) await writeAndDerive(t, batch);
  }, 120_000);

  const report = async (funnelId: string, range: { startAt: string; endAt: string }) => {
    const response = await t.request('GET', `/api/v1/analytics/funnels/${funnelId}`, { token, query: { websiteId, timezone: 'UTC', ...range } });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0].steps.map((step: { visitors: number }) => step.visitors);
  };

  const ranges = {
    // 30 days around the events.
    month: { startAt: '2026-03-01', endAt: '2026-03-30' },
    // 80 days: beyond 2^32 ms.
    long: { startAt: '2026-01-01', endAt: '2026-03-21' },
  };

  for (const [name, range] of Object.entries(ranges)) {
    it(`counts steps at the same instant in either order, and none a few milliseconds early (${name})`, async () => {
      // Step 1: the nine visitors with a /pricing view. Step 2: tie-goal-first, tie-page-first, tie-one-batch, goal-after.
      expect(await report(pricingThenSignup, range)).toEqual([9, 4]);
    });

    it(`lets one event be two steps it matches, at or after the step before (${name})`, async () => {
      // /docs: one-view-two-steps, view-tie, view-before; /pricing at or after it: the first two, for both /pricing steps.
      expect(await report(pricingTwice, range)).toEqual([3, 2, 2]);
    });
  }
});
