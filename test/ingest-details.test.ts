import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { rebuildSessions } from '../src/modules/analytics/session-rebuild.ts';
import { type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { IPHONE, type Website, pageview, send } from './helpers/browser-events.ts';
import { describeEachEventEngine, eventsOnClickHouse } from './helpers/clickhouse.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';

// What ingestion keeps for the website API's reads (website-api.md section 5).

async function newWebsite(t: TestApp): Promise<Website> {
  const owner = await createAccount(t);
  return (await createWebsite(t, owner.token)) as Website;
}

describeEachEventEngine('what ingestion keeps for the reads', (engine) => {
  const t = useTestApp(engine, { trustProxy: true });

  it('keeps campaign parameters, the referrer host and source name, versions, viewport and place', async () => {
    const website = await newWebsite(t);
    const href = `https://${website.domain}/launch?utm_source=newsletter&utm_medium=email&utm_campaign=spring&utm_term=shoes&utm_content=hero&ref=producthunt&source=tw&via=alice&x=1`;
    const response = await send(t, pageview(website, { href, referrer: 'https://www.google.co.uk/search?q=secret', viewport: { width: 390.4, height: 844 } }), {
      userAgent: IPHONE,
      headers: { 'x-forwarded-for': '8.8.8.8' },
    });
    expect(response.status).toBe(200);
    const [row] = await t.storedEvents(website.id);
    expect(row).toMatchObject({
      path: '/launch',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'spring',
      utm_term: 'shoes',
      utm_content: 'hero',
      ref_param: 'producthunt',
      source_param: 'tw',
      via_param: 'alice',
      referrer_host: 'google.co.uk',
      referrer_source: 'Google',
      referrer: 'https://www.google.co.uk/search',
      browser: 'Safari',
      browser_version: '17.0',
      os: 'iOS',
      os_version: '17.0',
      device: 'mobile',
      viewport_width: 390,
      viewport_height: 844,
      country: 'US',
      region: 'California',
      city: 'Mountain View',
    });
    expect(JSON.stringify(Object.values(row!))).not.toContain('8.8.8.8');
  });

  it('reads direct traffic as Direct/None and a same-site referrer as direct too', async () => {
    const website = await newWebsite(t);
    await send(t, pageview(website, { referrer: null }));
    await send(t, pageview(website, { referrer: `https://www.${website.domain}/pricing` }));
    const rows = await t.storedEvents(website.id);
    expect(rows.map((row) => [row.referrer_source, row.referrer_host])).toEqual([
      ['Direct/None', null],
      ['Direct/None', null],
    ]);
  });

  it("keeps an outbound link's target without its query string", async () => {
    const website = await newWebsite(t);
    const response = await send(t, pageview(website, { type: 'external_link', extraData: { url: 'https://github.com/acme/repo?token=abc#x', text: 'Repo' } }));
    expect(response.status).toBe(200);
    const [row] = await t.storedEvents(website.id);
    expect(row?.link_url).toBe('https://github.com/acme/repo');
  });

  it('keeps one session row with its entry and exit pages, counts and source', async () => {
    const website = await newWebsite(t);
    const visitorId = randomUUID();
    const sessionId = `s${randomUUID()}`;
    const at = (path: string, extra: Record<string, unknown> = {}) =>
      pageview(website, { visitorId, sessionId, href: `https://${website.domain}${path}`, ...extra });
    await send(t, at('/landing?utm_campaign=spring', { referrer: 'https://news.ycombinator.com/item?id=1' }));
    await send(t, at('/pricing', { referrer: `https://${website.domain}/landing` }));
    await send(t, at('/pricing', { type: 'custom', extraData: { eventName: 'signup' } }));
    await send(t, at('/thanks', { referrer: `https://${website.domain}/pricing` }));
    const stored = await t.storedEvents(website.id);
    expect(stored.map((row) => [row.type, row.path, row.session_id])).toEqual([
      ['pageview', '/landing', sessionId],
      ['pageview', '/pricing', sessionId],
      ['custom', '/pricing', sessionId],
      ['pageview', '/thanks', sessionId],
    ]);
    // ClickHouse keeps no sessions table: it derives sessions from the raw events at read time.
    if (eventsOnClickHouse(engine)) return;
    await settleRollups(t)(website.id);
    const sessions = await t.db.selectFrom('sessions').selectAll().where('website_id', '=', website.id).execute();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({
      session_id: sessionId,
      visitor_id: visitorId,
      pageviews: 3,
      events: 4,
      goals: 1,
      entry_hostname: website.domain,
      entry_path: '/landing',
      exit_path: '/thanks',
      referrer_source: 'Hacker News',
      utm_campaign: 'spring',
    });
    expect(Date.parse(sessions[0]!.ended_at)).toBeGreaterThanOrEqual(Date.parse(sessions[0]!.started_at));

    // Rebuilt from the raw events, the sessions are what ingestion kept.
    await rebuildSessions(t.db, website.id);
    expect(await t.db.selectFrom('sessions').selectAll().where('website_id', '=', website.id).execute()).toEqual(sessions);
  });
});
