import { expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { createAccount, createWebsite, expectError } from './helpers/factories.ts';

// Inputs that once reached the database or the router raw: each must come back as a clear 4xx in
// the error envelope, change nothing, and never as a 5xx.

describeEachEngine('hostile input', (engine) => {
  const t = useTestApp(engine);

  it('refuses a NUL character in a body string with 400 and changes nothing', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const url = `/api/v1/admin/websites/${website.id}`;
    expectError(await t.request('PUT', url, { token: owner.token, body: { name: 'bad\u0000name' } }), 400, /NUL character in name/);
    expectError(await t.request('PUT', '/api/v1/admin/account', { token: owner.token, body: { name: '\u0000' } }), 400, /NUL/);
    expect((await t.request('GET', url, { token: owner.token })).body.data[0].name).toBe('Test site');
  });

  it('refuses a NUL character in a query value or a path parameter with 400 naming it (PostgreSQL refuses NUL in text)', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['/api/v1/analytics/pages', { filter_page: 'contains:a\u0000b' }, /query\.filter_page: must not contain a NUL/],
      ['/api/v1/analytics/pages', { filter_browser: 'a\u0000b' }, /query\.filter_browser/],
      ['/api/v1/visitors', { completedGoal: 'a\u0000b' }, /query\.completedGoal/],
      ['/api/v1/visitors', { visitedPage: '/a\u0000b' }, /query\.visitedPage/],
      ['/api/v1/visitors/a%00b', {}, /path\.visitorId: must not contain a NUL/],
      ['/api/v1/analytics/overview', { timezone: 'Europe/Paris\u0000' }, /query\.timezone/],
    ];
    for (const [path, query, pattern] of cases) {
      expectError(await t.request('GET', path, { token: owner.token, query: { websiteId: website.id, ...query } }), 400, pattern);
    }
    expectError(await t.request('GET', `/api/v1/admin/websites/${website.id}/notes`, { token: owner.token, query: { q: 'a\u0000b' } }), 400, /query\.q/);
  });

  it('answers router failures in the envelope: a malformed %-escape and an over-long path id', async () => {
    const owner = await createAccount(t);
    expectError(await t.request('GET', '/api/v1/admin/websites/%E0%A4%A', { token: owner.token }), 400, /malformed/);
    expectError(await t.request('GET', `/api/v1/admin/websites/${'a'.repeat(300)}`, { token: owner.token }), 400, /too long/);
  });

  it('refuses query parameters a route does not take, naming them', async () => {
    const owner = await createAccount(t);
    expectError(await t.request('GET', '/api/v1/admin/account?verbose=1', { token: owner.token }), 400, /query\.verbose/);
  });

  it('answers 400 for a repeated websiteId in the query', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const url = `/api/v1/analytics/timeseries?websiteId=${website.id}&websiteId=${website.id}&fields=visitors&interval=day`;
    expectError(await t.request('GET', url, { token: owner.token }), 400, /single value/);
  });

  it('answers 400 for time-series dates outside the years both engines store', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const base = `/api/v1/analytics/timeseries?websiteId=${website.id}&fields=visitors,revenue&interval=`;
    expectError(await t.request('GET', `${base}day&startAt=0000-01-01&endAt=2026-01-01`, { token: owner.token }), 400, /query\.startAt/);
    expectError(await t.request('GET', `${base}hour&startAt=2026-01-01&endAt=9999-12-31`, { token: owner.token }), 400, /query\.endAt/);
  });
});
