import { beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, MARCH, analyticsFixture } from './helpers/analytics-fixture.ts';
import { type CliResult, expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createApiKey, newEvent } from './helpers/factories.ts';

// `sightline analytics ...` and `sightline visitors ...` as processes against a listening server,
// over the known March 2026 traffic of analytics-fixture.ts (3 visitors, 4 sessions, 6 pageviews,
// one signup and one 49.00 USD payment by v1).

// Whole cells, in UTC (times in tables are shortened to the terminal's local time); one test
// checks the 80-column fit.
// Tables as a 250-column terminal shows them (into a pipe they would be tab-separated values).
process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

const RANGE = ['--start-at', MARCH.startAt, '--end-at', MARCH.endAt];

/** stdout's lines with their trailing blanks dropped. */
const lines = (result: CliResult) => result.stdout.trimEnd().split('\n');

describe('sightline analytics and visitors', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;
  let f: Fixture;
  let token: string;

  beforeAll(async () => {
    f = await analyticsFixture(t);
    token = f.owner.token;
  });

  /** What the API answers for the same read, as --json prints it (the envelope's status left out). */
  async function api(path: string, query: Record<string, string> = {}) {
    const response = await t.request('GET', path, { token, query: { websiteId: f.website.id, ...MARCH, ...query } });
    expect(response.status, response.raw).toBe(200);
    const { status: _status, ...rest } = response.body;
    return Object.keys(rest).length === 1 ? rest.data : rest;
  }

  it('overview: a record for people, the API data with --json, filters and fields; a df_ key needs no -w', async () => {
    const table = await cli.run(['analytics', 'overview', '-w', f.website.domain, ...RANGE], { token });
    expectExit(table, 0);
    expect(table.stdout).toBe(
      [
        'Visitors:        3',
        'Sessions:        4',
        'Pageviews:       6',
        'Bounce rate:     50%',
        'Avg. session:    4m 15s',
        'Revenue:         49 USD',
        'Payments:        1',
        'Revenue/visitor: 16.33 USD',
        'Conversion rate: 33.33%',
        '',
      ].join('\n'),
    );
    expect(table.stderr).toBe('');

    const json = await cli.run(['analytics', 'overview', '-w', f.website.id, ...RANGE, '--json'], { token });
    expectExit(json, 0);
    expect(parseJson(json)).toEqual(await api('/api/v1/analytics/overview'));
    expect(parseJson(json)).toEqual([expect.objectContaining({ visitors: 3, pageviews: 6, revenue: 49 })]);

    const filtered = await cli.run(
      ['analytics', 'overview', '-w', f.website.trackingId, ...RANGE, '--fields', 'visitors,pageviews', '--filter', 'country=is:US', '--json'],
      { token },
    );
    expectExit(filtered, 0);
    expect(parseJson(filtered)).toEqual([{ visitors: 2, pageviews: 5 }]);

    const key = await createApiKey(t, token, f.website.id);
    const ownKey = await cli.run(['analytics', 'overview', ...RANGE, '--fields', 'visitors'], { token: key.key });
    expectExit(ownKey, 0);
    expect(ownKey.stdout).toBe('Visitors: 3\n');
  });

  it('a breakdown: only the rows --filter keeps, --limit rows, the next page said on stderr; --json is data and pagination', async () => {
    const args = ['analytics', 'pages', '-w', f.website.domain, ...RANGE, '--filter', 'referrer=Google', '--limit', '1'];
    const table = await cli.run(args, { token });
    expectExit(table, 0);
    // One hostname on every row: the column is left out.
    expect(lines(table)).toEqual(['PATH  VISITORS  PAGEVIEWS  REVENUE', '/     1         1          49']);
    expect(table.stderr).toBe('Rows 1-1 of 2; --offset 1 for the next page.\n');

    const json = await cli.run([...args, '--offset', '1', '--json'], { token });
    expectExit(json, 0);
    expect(parseJson(json)).toEqual(await api('/api/v1/analytics/pages', { filter_referrer: 'Google', limit: '1', offset: '1' }));
    expect(parseJson(json)).toMatchObject({ data: [{ path: '/pricing', visitors: 1 }], pagination: { limit: 1, offset: 1, total: 2 } });

    // Filters AND together; values OR.
    const countries = await cli.run(
      ['analytics', 'countries', '-w', f.website.id, ...RANGE, '--filter', 'browser=is:Firefox,Safari', '--filter', 'device=desktop'],
      { token },
    );
    expectExit(countries, 0);
    expect(lines(countries)).toEqual(['COUNTRY        CODE  VISITORS  PAGEVIEWS  REVENUE', 'United States  US    1         3          0']);
    expect(countries.stderr).toBe('');

    const clicks = await cli.run(['analytics', 'exit-clicks', '-w', f.website.id, ...RANGE], { token });
    expectExit(clicks, 0);
    expect(lines(clicks)).toEqual(['URL                      CLICKS  VISITORS', 'https://github.com/acme  1       1']);
  });

  it('a bad filter: the server refuses it with its message (exit 1); a malformed --filter is a usage error (exit 2)', async () => {
    const refused = await cli.run(['analytics', 'pages', '-w', f.website.id, '--filter', 'country=near:US'], { token });
    expectExit(refused, 1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^sightline: .*filter_country.*"near" is not an operator.*\(HTTP 400\)\n$/);

    const unknown = await cli.run(['visitors', 'list', '-w', f.website.id, '--filter', 'colour=red'], { token });
    expectExit(unknown, 1);
    expect(unknown.stderr).toMatch(/^sightline: .*filter_colour.*\(HTTP 400\)\n$/);

    const malformed = await cli.run(['analytics', 'overview', '-w', f.website.id, '--filter', 'country'], { token });
    expectExit(malformed, 2);
    expect(malformed.stderr).toMatch(/^sightline: --filter "country": expected <dimension>=\[<op>:\]<values>/);
    const twice = await cli.run(['analytics', 'overview', '-w', f.website.id, '--filter', 'country=US', '--filter', 'country=DE'], { token });
    expectExit(twice, 2);
    expect(twice.stderr).toMatch(/--filter country given twice/);
    const halfRange = await cli.run(['analytics', 'countries', '-w', f.website.id, '--start-at', '2026-03-01'], { token });
    expectExit(halfRange, 2);
    expect(halfRange.stderr).toBe('sightline: give --start-at and --end-at together, or neither\n');
  });

  it('visitors list: newest activity first, --completed-goal, --visited-page(-contains), --(no-)is-customer; visitors get: one visitor, 404 for a stranger', async () => {
    const list = await cli.run(['visitors', 'list', '-w', f.website.domain, ...RANGE], { token });
    expectExit(list, 0);
    expect(lines(list)).toEqual([
      'VISITOR ID  COUNTRY  SOURCE       LAST SEEN',
      'v3          US       Direct/None  2026-03-05 09:00',
      'v2          DE       Direct/None  2026-03-02 11:00',
      'v1          US       Google       2026-03-02 10:07',
    ]);
    const json = await cli.run(['visitors', 'list', '-w', f.website.id, ...RANGE, '--json'], { token });
    expectExit(json, 0);
    expect(parseJson(json)).toEqual(await api('/api/v1/visitors'));
    const customers = await cli.run(['visitors', 'list', '-w', f.website.id, '--is-customer', '--json'], { token });
    expect(parseJson(customers).data.map((v: { visitorId: string }) => v.visitorId)).toEqual(['v1']);
    const others = await cli.run(['visitors', 'list', '-w', f.website.id, '--no-is-customer', '--visited-page-contains', 'pric', '--json'], { token });
    expect(parseJson(others).data.map((v: { visitorId: string }) => v.visitorId)).toEqual(['v3', 'v2']);

    const goal = await cli.run(['visitors', 'list', '-w', f.website.id, '--completed-goal', 'signup', '--json'], { token });
    expectExit(goal, 0);
    expect(parseJson(goal).data.map((v: { visitorId: string }) => v.visitorId)).toEqual(['v1']);
    const page = await cli.run(['visitors', 'list', '-w', f.website.id, '--visited-page', '/blog/*', '--limit', '1'], { token });
    expectExit(page, 0);
    expect(lines(page).slice(1).map((line) => line.split(' ')[0])).toEqual(['v3']);

    const one = await cli.run(['visitors', 'get', '-w', f.website.domain, 'v1'], { token });
    expectExit(one, 0);
    const [record, pages] = one.stdout.split('\n\n');
    expect(record!.split('\n')).toEqual([
      'Visitor:      v1',
      'Place:        United States',
      'Device:       desktop',
      'Browser:      Chrome',
      'OS:           Windows',
      'Viewport:     -',
      'Params:       utm_campaign=spring',
      'Visits:       1',
      'Pageviews:    2',
      'First visit:  2026-03-02T10:00:00.000Z',
      'Last visit:   2026-03-02T10:07:00.000Z',
      `Current URL:  https://${f.website.domain}/pricing`,
      'Goals:        signup',
      'Profile:      -',
      'Profile data: -',
    ]);
    expect(pages!.trimEnd().split('\n')).toEqual([
      'VIEWED            PAGE',
      `2026-03-02 10:05  https://${f.website.domain}/pricing`,
      `2026-03-02 10:00  https://${f.website.domain}/`,
    ]);
    const oneJson = await cli.run(['visitors', 'get', '-w', f.website.id, 'v1', '--json'], { token });
    expectExit(oneJson, 0);
    const expected = (await t.request('GET', '/api/v1/visitors/v1', { token, query: { websiteId: f.website.id } })).body.data;
    // The times since the first and the current visit count up to the moment of the answer.
    const settled = (data: { activity: object }) => ({ ...data, activity: { ...data.activity, timeSinceFirstVisit: 0, timeSinceCurrentVisit: 0 } });
    expect(settled(parseJson(oneJson))).toEqual(settled(expected));

    const stranger = await cli.run(['visitors', 'get', '-w', f.website.id, 'nobody'], { token });
    expectExit(stranger, 1);
    expect(stranger.stderr).toMatch(/^sightline: .*\(HTTP 404\)\n$/);
  });

  it('funnel: visitors, conversion and drop-off per step, the totals on stderr; --json is the report', async () => {
    const created = await t.request('POST', `/api/v1/admin/websites/${f.website.id}/funnels`, {
      token,
      body: { name: 'Signup', steps: [{ name: 'Pricing', type: 'pageview', url: '/pricing' }, { name: 'Signed up', type: 'goal', goalName: 'signup' }] },
    });
    expect(created.status, created.raw).toBe(200);
    const funnelId = created.body.data[0].id as string;

    const table = await cli.run(['analytics', 'funnel', funnelId, '-w', f.website.domain, ...RANGE], { token });
    expectExit(table, 0);
    expect(lines(table)).toEqual([
      '#  STEP       TYPE      VISITORS  CONVERSION  DROP-OFF  REVENUE',
      '1  Pricing    pageview  3         100%        0%        49',
      '2  Signed up  goal      1         33.33%      66.67%    49',
    ]);
    expect(table.stderr).toBe('Funnel "Signup": 3 visitors entered, 33.33% reached the last step.\n');

    const json = await cli.run(['analytics', 'funnel', funnelId, '-w', f.website.id, ...RANGE, '--json'], { token });
    expectExit(json, 0);
    expect(parseJson(json)).toEqual(await api(`/api/v1/analytics/funnels/${funnelId}`));
  });

  it('goal properties, metadata, realtime and the realtime map', async () => {
    const properties = await cli.run(['analytics', 'goal-properties', '-w', f.website.id, ...RANGE, '--event', 'signup'], { token });
    expectExit(properties, 0);
    expect(lines(properties)).toEqual(['PROPERTY  VALUE  COMPLETIONS  VISITORS', 'plan      pro    1            1']);

    const metadata = await cli.run(['analytics', 'metadata', '-w', f.website.id, '--fields', 'domain,currency'], { token });
    expectExit(metadata, 0);
    expect(metadata.stdout).toBe(`Domain:   ${f.website.domain}\nCurrency: USD\n`);

    await t.app.events.write([newEvent(f.website.id, 'live-1', { occurredAt: new Date().toISOString(), path: '/now', hostname: f.website.domain, country: 'FR', browser: 'Firefox', device: 'mobile' })]);
    const realtime = await cli.run(['analytics', 'realtime', '-w', f.website.id], { token });
    expectExit(realtime, 0);
    expect(realtime.stdout).toBe('Visitors (last 5 minutes): 1\n');
    const map = await cli.run(['analytics', 'realtime-map', '-w', f.website.id], { token });
    expectExit(map, 0);
    expect(lines(map)).toEqual(['VISITOR ID  PLACE  DEVICE  BROWSER  PAGE  VISITS', 'live-1      FR     mobile  Firefox  /now  1']);
    expect(map.stderr).toBe('1 visitor in the last 10 minutes; 1 recent event and 0 recent payments (--json lists them).\n');
  });

  it('fits the tables to 80 columns, keeping visitor ids whole', async () => {
    const visitorId = '3f1c2e9b-1d4a-4b00-9a12-345678abcdef';
    const path = `/docs/${'getting-started/'.repeat(6)}install`;
    await t.app.events.write([
      newEvent(f.website.id, visitorId, { occurredAt: '2026-03-06T08:00:00.000Z', path, hostname: f.website.domain, country: 'NZ', browser: 'Samsung Internet', device: 'tablet' }),
    ]);
    const list = await cli.run(['visitors', 'list', '-w', f.website.id, ...RANGE], { token, env: { SIGHTLINE_FORCE_TTY: '80' } });
    expectExit(list, 0);
    expect(lines(list)[1]).toBe(`${visitorId}  NZ       -            2026-03-06 08:00`);
    for (const args of [
      ['analytics', 'pages', '-w', f.website.id],
      ['analytics', 'campaigns', '-w', f.website.id],
      ['analytics', 'regions', '-w', f.website.id],
      ['visitors', 'list', '-w', f.website.id],
    ]) {
      const result = await cli.run(args, { token, env: { SIGHTLINE_FORCE_TTY: '80' } });
      expectExit(result, 0);
      for (const line of lines(result)) expect(Array.from(line).length, line).toBeLessThanOrEqual(80);
    }
  });
});
