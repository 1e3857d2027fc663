import { expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { type TestAccount, createAccount, createWebsite, newEvent } from './helpers/factories.ts';

// Where a listed visitor came from is their first session's source (the relational read:
// the earliest session whose visitor they are, ties by session id), whichever event of theirs came
// first; and their current URL is their latest event with a page, even when their last event has
// none. On ClickHouse the first visit is read from the sessions table and the latest event from
// the window the list's page came from (docs/decisions.md, "The ClickHouse visitor list reads a
// bounded amount"): a read of the visitor's first event, or first event with a session, answers
// otherwise here, and so does a latest event looked for only in that window.

const APRIL = { startAt: '2026-04-01', endAt: '2026-04-30' };
const at = (day: number, hour: number, minute = 0) => new Date(Date.UTC(2026, 3, day, hour, minute)).toISOString();

const NO_CAMPAIGN = { utm_source: null, utm_medium: null, utm_term: null, utm_content: null, ref: null, source: null, via: null };

describeEachEventEngine('the visitor list takes the first visit from the first session', (engine) => {
  const t: TestApp = useTestApp(engine);
  let owner: TestAccount;
  let website: { id: string; domain: string };

  it('sets up visitors whose first event, or first event with a session, is not their first session', async () => {
    owner = await createAccount(t);
    website = await createWebsite(t, owner.token);
    const view = (visitor: string, sessionId: string, occurredAt: string, referrerSource: string, campaign: string, path = '/'): NewEvent =>
      newEvent(website.id, visitor, {
        hostname: website.domain,
        path,
        sessionId,
        occurredAt,
        referrer: `https://${referrerSource.toLowerCase()}.example.org/`,
        details: { referrerSource, utmCampaign: campaign },
      });
    const serverGoal = (visitor: string, occurredAt: string): NewEvent =>
      newEvent(website.id, visitor, { type: 'custom', name: 'signup', sessionId: null, hostname: null, path: null, source: 'api', occurredAt, details: { utmCampaign: 'from-the-goal' } });
    // One write each, in this order: the event ids grow with it (c-zeta's event before c-alpha's).
    for (const event of [
      // b: a goal without a session first, then a page view in a session a began, then b's own two.
      serverGoal('b', at(10, 8)),
      view('a', 'shared', at(10, 9), 'Reddit', 'a-campaign'),
      view('b', 'shared', at(10, 9, 1), 'DuckDuckGo', 'joined-a'),
      view('b', 'b-own', at(11, 9), 'Google', 'b-own'),
      view('b', 'b-later', at(12, 9), 'Bing', 'b-later'),
      // c: two sessions that start at the same instant; the first by session id was written second.
      view('c', 'c-zeta', at(13, 9), 'Google', 'zeta'),
      view('c', 'c-alpha', at(13, 9), 'Bing', 'alpha'),
      // d: a page view early in the month, and last a goal without a page in the list's newest hour.
      view('d', 'd-visit', at(2, 9), 'Google', 'd-campaign', '/d-page'),
      serverGoal('d', at(30, 12)),
    ]) {
      await writeAndDerive(t, [event]);
    }
  });

  const list = async (query: Record<string, string>) => {
    const response = await t.request('GET', '/api/v1/visitors', { token: owner.token, query: { websiteId: website.id, ...query } });
    expect(response.status, response.raw).toBe(200);
    return response.body.data as Array<{ visitorId: string; currentUrl: string | null; acquisition: Record<string, string | null> }>;
  };

  it('lists each visitor with their first session as acquisition and their latest page as currentUrl, over a range and over all time', async () => {
    for (const range of [APRIL, {}]) {
      const rows = await list(range);
      expect(rows.map((row) => row.visitorId), JSON.stringify(range)).toEqual(['d', 'c', 'b', 'a']);
      const of = (id: string) => rows.find((row) => row.visitorId === id)!;
      expect(of('a').acquisition).toEqual({ referrer: 'Reddit', ...NO_CAMPAIGN, utm_campaign: 'a-campaign' });
      // Not the goal (no session), not the shared session (a's): b's own first one.
      expect(of('b').acquisition).toEqual({ referrer: 'Google', ...NO_CAMPAIGN, utm_campaign: 'b-own' });
      // Same start: the smaller session id, as the relational read orders them.
      expect(of('c').acquisition).toEqual({ referrer: 'Bing', ...NO_CAMPAIGN, utm_campaign: 'alpha' });
      expect(of('d').acquisition).toEqual({ referrer: 'Google', ...NO_CAMPAIGN, utm_campaign: 'd-campaign' });
      // d's last event (the goal) has no page: its latest page lies weeks before the newest window.
      expect(of('d').currentUrl).toBe(`https://${website.domain}/d-page`);
      expect(of('b').currentUrl).toBe(`https://${website.domain}/`);
    }
    // One per page: each page's window holds its visitor.
    const paged = [];
    for (let offset = 0; offset < 4; offset += 1) paged.push(...(await list({ ...APRIL, limit: '1', offset: String(offset) })));
    expect(paged.map((row) => [row.visitorId, row.acquisition.utm_campaign, row.currentUrl])).toEqual([
      ['d', 'd-campaign', `https://${website.domain}/d-page`],
      ['c', 'alpha', `https://${website.domain}/`],
      ['b', 'b-own', `https://${website.domain}/`],
      ['a', 'a-campaign', `https://${website.domain}/`],
    ]);
  });

  it("counts a visitor's visits as the sessions they began, on the visitor's page", async () => {
    const visits = async (id: string) => {
      const response = await t.request('GET', `/api/v1/visitors/${id}`, { token: owner.token, query: { websiteId: website.id } });
      expect(response.status, response.raw).toBe(200);
      return response.body.data.activity as { visitCount: number; timeSinceCurrentVisit: number; timeSinceFirstVisit: number };
    };
    const b = await visits('b');
    // b-own and b-later, not the shared session; the current visit began 04-12 09:00, the first event (the goal) 04-10 08:00.
    expect(b.visitCount).toBe(2);
    expect(b.timeSinceFirstVisit - b.timeSinceCurrentVisit).toBe(Date.parse(at(12, 9)) - Date.parse(at(10, 8)));
    expect((await visits('a')).visitCount).toBe(1);
    expect((await visits('c')).visitCount).toBe(2);
    expect((await visits('d')).visitCount).toBe(1);
  });
});
