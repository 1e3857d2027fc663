import { expect, it } from 'vitest';
import { type Fixture, MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { useTestApp } from './helpers/app.ts';
import { EVERYTHING } from './helpers/attribute-filters.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { expectError } from './helpers/factories.ts';

// contains / does_not_contain on every dimension, not only on pages (issue 35 item 4): a
// substring of the stored value, ignoring case, `%` and `_` literal, over the analytics fixture
// (v1 from Google with utm_campaign spring in San Jose, US, Chrome on Windows, who signed up;
// v2 direct from DE on Firefox; v3 direct from the US on Safari, macOS, no city known).

describeEachEventEngine('website API contains filters on every dimension', (engine) => {
  const t = useTestApp(engine);
  let f: Fixture;

  async function counts(query: Record<string, string>, range: Record<string, string> = MARCH) {
    const response = await t.request('GET', '/api/v1/analytics/overview', {
      token: f.owner.token,
      query: { websiteId: f.website.id, ...range, fields: 'visitors,pageviews', ...query },
    });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0] as { visitors: number; pageviews: number };
  }

  it('sets up the fixture', async () => {
    f = await analyticsFixture(t);
  });

  it('filters a session dimension (referrer, utm_campaign) by a substring', async () => {
    // The referrer filter reads the session's source name and its host.
    expect(await counts({ filter_referrer: 'contains:OOG' })).toEqual({ visitors: 1, pageviews: 2 });
    expect(await counts({ filter_referrer: 'contains:gle.co' })).toEqual({ visitors: 1, pageviews: 2 });
    expect(await counts({ filter_referrer: 'does_not_contain:google' })).toEqual({ visitors: 2, pageviews: 4 });
    expect(await counts({ filter_utm_campaign: 'contains:PRIN' })).toEqual({ visitors: 1, pageviews: 2 });
    // Sessions without a campaign do not contain it.
    expect(await counts({ utm_campaign: 'does_not_contain:spr' })).toEqual({ visitors: 2, pageviews: 4 });
  });

  it('filters an event dimension (hostname, goal) by a substring, % and _ literal', async () => {
    expect(await counts({ filter_hostname: 'contains:EXAMPLE.COM' })).toEqual({ visitors: 3, pageviews: 6 });
    expect(await counts({ filter_hostname: 'does_not_contain:example' })).toEqual({ visitors: 0, pageviews: 0 });
    expect(await counts({ filter_goal: 'contains:SIGN' })).toEqual({ visitors: 1, pageviews: 2 });
    expect(await counts({ filter_goal: 'does_not_contain:sign' })).toEqual({ visitors: 2, pageviews: 4 });
    // As wildcards, `s_gn` and `si%up` would match signup.
    expect(await counts({ filter_goal: 'contains:s_gn' })).toEqual({ visitors: 0, pageviews: 0 });
    expect(await counts({ filter_goal: 'contains:si%up' })).toEqual({ visitors: 0, pageviews: 0 });
  });

  it('filters a visitor attribute (city, country, device) by a substring; country by its code', async () => {
    expect(await counts({ filter_city: 'contains:JOS' })).toEqual({ visitors: 1, pageviews: 2 });
    // Events without a city pass a negated filter: v1's goal and click, v2's and v3's events.
    expect(await counts({ filter_city: 'does_not_contain:jos' })).toEqual({ visitors: 3, pageviews: 4 });
    expect(await counts({ filter_country: 'contains:u' })).toEqual({ visitors: 2, pageviews: 5 });
    expect(await counts({ filter_country: 'does_not_contain:S' })).toEqual({ visitors: 1, pageviews: 1 });
    // The code, not the name.
    expect(await counts({ filter_country: 'contains:united' })).toEqual({ visitors: 0, pageviews: 0 });
    expect(await counts({ filter_device: 'contains:TOP' })).toEqual({ visitors: 2, pageviews: 5 });
    // Values OR-ed, filters AND-ed.
    expect(await counts({ filter_country: 'contains:de,us', filter_device: 'does_not_contain:mob' })).toEqual({ visitors: 2, pageviews: 5 });
  });

  it('matches the names the API shows: Mac OS for the stored macOS', async () => {
    expect(await counts({ filter_os: 'contains:mac os' })).toEqual({ visitors: 1, pageviews: 3 });
    expect(await counts({ filter_os: 'does_not_contain:Mac OS' })).toEqual({ visitors: 2, pageviews: 3 });
    expect(await counts({ filter_browser: 'contains:saf' })).toEqual({ visitors: 1, pageviews: 3 });
  });

  it('answers all-time reads (the per-profile tables on the relational engines) as the raw events do', async () => {
    const filterSets: Record<string, string>[] = [{ filter_country: 'contains:u' }, { filter_city: 'contains:jos' }, { filter_city: 'does_not_contain:jos', filter_os: 'contains:mac os' }];
    for (const filters of filterSets) {
      const allTime = await counts(filters, {});
      expect(allTime, JSON.stringify(filters)).toEqual(await counts(filters, { startAt: EVERYTHING.from, endAt: EVERYTHING.to }));
      expect(allTime.visitors, JSON.stringify(filters)).toBeGreaterThan(0);
    }
  });

  it('lists the visitors a contains filter keeps (all time: the stored visitor rows on the relational engines)', async () => {
    const listed = async (query: Record<string, string>) => {
      const response = await t.request('GET', '/api/v1/visitors', { token: f.owner.token, query: { websiteId: f.website.id, ...query } });
      expect(response.status, response.raw).toBe(200);
      return response.body.data.map((row: { visitorId: string }) => row.visitorId);
    };
    expect(await listed({ filter_city: 'contains:JOS' })).toEqual(['v1']);
    expect(await listed({ filter_country: 'contains:u' })).toEqual(['v3', 'v1']);
    expect(await listed({ filter_utm_campaign: 'does_not_contain:spring' })).toEqual(['v3', 'v2']);
  });

  it('answers 400 naming the field for an empty substring or a bad operator', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ filter_city: 'contains:' }, /query\.filter_city/],
      [{ filter_utm_campaign: 'does_not_contain:a,,b' }, /query\.filter_utm_campaign/],
      [{ filter_referrer: 'contains: ' }, /query\.filter_referrer/],
      [{ filter_hostname: 'matches:shop' }, /query\.filter_hostname.*not an operator/],
    ];
    for (const [query, pattern] of cases) {
      const response = await t.request('GET', '/api/v1/analytics/overview', { token: f.owner.token, query: { websiteId: f.website.id, ...MARCH, ...query } });
      expectError(response, 400, pattern);
    }
  });
});
