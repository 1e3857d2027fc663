import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { ConfigError, DEFAULT_UMAMI_HOSTS, loadConfig } from '../src/config.ts';
import { percentOf } from '../src/lib/percent.ts';
import { claimNextJob, releaseJob } from '../src/modules/integrations/job-queue.ts';
import { IMPORT_JOB } from '../src/modules/imports/imports.repository.ts';
import { createUmamiImport } from '../src/modules/imports/umami-imports.service.ts';
import { runUmamiImportJob } from '../src/modules/imports/umami-job.ts';
import { shownLabel } from '../src/modules/stats/labels.ts';
import { browserName, deviceName, regionCode, sourceName, systemName } from '../src/modules/imports/umami-names.ts';
import { type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { pageview, send } from './helpers/browser-events.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { POSTGRES_URL } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createToken, createWebsite, expectError } from './helpers/factories.ts';
import {
  FIXTURE_PASSWORD,
  type UmamiDatabase,
  type UmamiEvent,
  type UmamiSession,
  createUmamiDatabase,
  expectedTables,
  insertEvents,
  insertSessions,
  insertWebsite,
} from './helpers/umami-fixture.ts';

// Issue 37 item 1, second source: an Umami 3.x database read directly (a real one, made with
// Umami's schema on the shared PostgreSQL), one Umami website into one Sightline website, in the
// background a few days at a time; checked number for number against what the events say, in
// the imported tables and in the website API's reads; refused when imported again; the
// connection URL's password never answered nor logged, and gone once the import ends.

const ZONE = 'Europe/Paris';
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const importsUrl = (websiteId: string, rest = '') => `/api/v1/admin/websites/${websiteId}/imports${rest}`;
const NAMES = { browser: browserName, os: systemName, device: deviceName, source: (domain: string | undefined, host: string) => sourceName(domain ?? null, host), region: regionCode };

/** Sessions and events over three past local days and today (when the website has its own event). */
function fixture(domain: string) {
  const today = DateTime.now().setZone(ZONE).startOf('day');
  const [a, b, c] = [3, 2, 1].map((back) => today.minus({ days: back })) as [DateTime, DateTime, DateTime];
  const at = (day: DateTime, time: string) => DateTime.fromISO(`${day.toISODate()}T${time}`, { zone: ZONE });
  const sessions: UmamiSession[] = [
    { id: randomUUID(), browser: 'firefox', os: 'Linux', device: 'desktop', country: 'DE', region: 'DE-BE' },
    { id: randomUUID(), browser: 'chrome', os: 'Mac OS', device: 'laptop', country: 'FR', region: 'FR-IDF' },
    { id: randomUUID(), browser: 'ios', os: 'iOS', device: 'mobile', country: 'US', region: 'US-CA' },
    { id: randomUUID(), browser: 'crios', os: 'iOS', device: 'mobile', country: 'DE', region: 'BE' },
    { id: randomUUID(), browser: 'edge-chromium', os: 'Windows 10', device: 'desktop', country: 'GB', region: 'GB-ENG' },
  ];
  const [s1, s2, s3, s4, s5] = sessions.map((s) => s.id) as [string, string, string, string, string];
  const visit = () => randomUUID();
  const [v1, v2, v3, v4, v5, v6, v7] = [visit(), visit(), visit(), visit(), visit(), visit(), visit()];
  const view = (sessionId: string, visitId: string, when: DateTime, path: string, extra: Partial<UmamiEvent> = {}): UmamiEvent => ({
    sessionId, visitId, at: when, type: 1, path, hostname: domain, ...extra,
  });
  const custom = (sessionId: string, visitId: string, when: DateTime, name: string): UmamiEvent => ({ sessionId, visitId, at: when, type: 2, path: '/', hostname: domain, name });
  const nowish = DateTime.max(today.plus({ seconds: 1 }), DateTime.now().minus({ seconds: 30 }).setZone(ZONE));
  const events: UmamiEvent[] = [
    // Day a: a two-page visit from Google with a signup; a visit crossing midnight into day b (counted on both days, as Umami does).
    view(s1, v1, at(a, '10:00:00'), '/', { referrer: 'www.google.com' }),
    view(s1, v1, at(a, '10:02:30'), '/pricing'),
    custom(s1, v1, at(a, '10:03:00'), 'Signup'),
    view(s2, v3, at(a, '23:50:00'), '/blog', { referrer: 'news.ycombinator.com', utm: { source: 'newsletter', medium: 'email', campaign: 'spring' } }),
    view(s2, v3, at(b, '00:10:00'), '/pricing'),
    // Day b: the first visitor returns (a bounce, direct); a three-page visit from Twitter with two events.
    view(s1, v2, at(b, '09:00:00'), '/'),
    view(s3, v4, at(b, '12:00:00'), '/', { referrer: 't.co' }),
    view(s3, v4, at(b, '12:01:00'), '/docs'),
    view(s3, v4, at(b, '12:05:20'), '/docs/api'),
    custom(s3, v4, at(b, '12:02:00'), 'Signup'),
    custom(s3, v4, at(b, '12:06:00'), 'Download'),
    // Day c: a bounce referred by the site itself (direct), a visit from google.de (Google) with two signups.
    view(s3, v5, at(c, '08:00:00'), '/docs', { referrer: domain }),
    view(s4, v6, at(c, '15:00:00'), '/pricing', { referrer: 'google.de' }),
    view(s4, v6, at(c, '15:00:40'), '/'),
    custom(s4, v6, at(c, '15:00:10'), 'Signup'),
    custom(s4, v6, at(c, '15:00:20'), 'Signup'),
    // Today: the website has its own events, so this day is left out.
    view(s5, v7, nowish, '/'),
  ];
  return { sessions, events, days: [a, b, c, today].map((day) => day.toISODate()!) };
}

describeEachEventEngine('importing an Umami database', (engine) => {
  const t = useTestApp(engine, { imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 500, umamiHosts: ['127.0.0.1', 'localhost'], umamiChunkDays: 2 } });
  let umami: UmamiDatabase;
  let owner: Awaited<ReturnType<typeof createAccount>>;
  let websiteId: string;
  let domain: string;
  let umamiWebsiteId: string;
  let importId: string;
  let data: ReturnType<typeof fixture>;
  let expected: Record<string, Record<string, string | number>[]>;
  let nativeOverview: { visitors: number; pageviews: number; sessions: number; bounce_rate: number; avg_session_duration: number };
  const nativeBreakdowns: Record<string, Record<string, unknown>[]> = {};

  beforeAll(async () => {
    umami = await createUmamiDatabase();
  });
  afterAll(async () => {
    await umami?.drop();
  });

  const range = () => ({ startAt: data.days[0]!, endAt: data.days[3]! });
  const read = async (path: string, query: Record<string, string> = {}) => {
    const response = await t.request('GET', path, { token: owner.token, query: { websiteId, ...query } });
    expect(response.status, response.raw).toBe(200);
    return response;
  };
  const overview = async (query: Record<string, string> = range()) => (await read('/api/v1/analytics/overview', query)).body.data[0];
  const breakdown = async (kind: string) => read(`/api/v1/analytics/${kind}`, range());
  const countImports = async () => Number((await t.db.selectFrom('imports').select((eb) => eb.fn.countAll().as('n')).where('website_id', '=', websiteId).executeTakeFirst())?.n);
  const create = (body: Record<string, unknown>, token = owner.token) => t.request('POST', importsUrl(websiteId, '/umami'), { token, body });
  const runJobs = async (app: TestApp = t) => {
    app.app.importJobs!.wake();
    await app.app.importJobs!.idle();
  };
  /** The expected rows of the past days (today's are the website's own), summed by a breakdown's key. */
  const importedBy = (table: string, key: (row: Record<string, string | number>) => string, metric = 'visitors') => {
    const sums = new Map<string, number>();
    for (const row of expected[table]!.filter((r) => r.day !== data.days[3])) sums.set(key(row), (sums.get(key(row)) ?? 0) + Number(row[metric]));
    return sums;
  };

  it('sets up a Sightline website with its own page view today, and an Umami database with two websites', async () => {
    owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    websiteId = website.id;
    domain = website.domain;
    const full = (await t.request('GET', `/api/v1/admin/websites/${websiteId}`, { token: owner.token })).body.data[0];
    expect((await send(t, pageview(full))).status).toBe(200);
    await settleRollups(t)();
    data = fixture(domain);
    nativeOverview = await overview();
    for (const kind of ['pages', 'referrers', 'countries', 'devices', 'browsers', 'operating-systems', 'goals', 'entry-pages']) nativeBreakdowns[kind] = (await breakdown(kind)).body.data;

    umamiWebsiteId = await insertWebsite(umami.client, 'Old blog', domain);
    await insertSessions(umami.client, umamiWebsiteId, data.sessions);
    await insertEvents(umami.client, umamiWebsiteId, data.events);
    // Another Umami website, and a deleted one: never read into this website.
    const other = await insertWebsite(umami.client, 'Another site', 'another.example');
    const otherSession = { id: randomUUID(), browser: 'chrome', os: 'Linux', device: 'desktop', country: 'IT', region: null };
    await insertSessions(umami.client, other, [otherSession]);
    await insertEvents(umami.client, other, [{ sessionId: otherSession.id, visitId: randomUUID(), at: DateTime.now().minus({ days: 2 }), type: 1, path: '/elsewhere', hostname: 'another.example' }]);
    await insertWebsite(umami.client, 'Gone', 'gone.example', true);
    expected = expectedTables(data.sessions, data.events, ZONE, NAMES);
  });

  it('lists the Umami websites of the database, read-only, without storing anything', async () => {
    const listed = await t.request('POST', importsUrl(websiteId, '/umami/websites'), { token: owner.token, body: { databaseUrl: `${umami.url}?schema=public&connection_limit=5` } });
    expect(listed.status, listed.raw).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ name: 'Another site', domain: 'another.example', events: 1 }),
      expect.objectContaining({ id: umamiWebsiteId, name: 'Old blog', domain, events: data.events.length }),
    ]);
    expect(listed.raw).not.toContain(FIXTURE_PASSWORD);
    expect(await countImports()).toBe(0);
  });

  it('refuses bad input with a 400 naming the field, and stores nothing', async () => {
    const bad = async (body: Record<string, unknown>, pattern: RegExp) => {
      const answer = await create(body);
      expectError(answer, 400, pattern);
      expect(answer.raw).not.toContain(FIXTURE_PASSWORD);
    };
    await bad({ databaseUrl: 'not a url', umamiWebsiteId }, /databaseUrl.*PostgreSQL connection URL/);
    await bad({ databaseUrl: 'mysql://u:p@127.0.0.1/umami', umamiWebsiteId }, /databaseUrl.*postgres:\/\//);
    await bad({ databaseUrl: `postgres://u:${FIXTURE_PASSWORD}@10.1.2.3:5432/umami`, umamiWebsiteId }, /databaseUrl.*10\.1\.2\.3.*IMPORT_UMAMI_HOSTS/);
    await bad({ databaseUrl: `postgres://u:${FIXTURE_PASSWORD}@db.internal.example/umami`, umamiWebsiteId }, /databaseUrl.*db\.internal\.example.*IMPORT_UMAMI_HOSTS/);
    await bad({ databaseUrl: `${umami.url}?host=/var/run/postgresql`, umamiWebsiteId }, /databaseUrl.*"host".*only sslmode and schema/);
    await bad({ databaseUrl: `${umami.url}?schema=x;drop`, umamiWebsiteId }, /databaseUrl.*schema "x;drop".*not a plain PostgreSQL name/);
    // Umami's own DATABASE_URL as Prisma takes it: its schema is used, its pool parameters ignored; a schema without Umami's tables is not Umami.
    await bad({ databaseUrl: `${umami.url}?schema=pg_catalog&connection_limit=5`, umamiWebsiteId }, /databaseUrl.*is not an Umami database/);
    await bad({ databaseUrl: 'postgres://u:%zz@127.0.0.1:5432/umami', umamiWebsiteId }, /databaseUrl.*password with a broken %-escape/);
    await bad({ databaseUrl: 'postgres://u:p@127.0.0.1:99999/umami', umamiWebsiteId }, /databaseUrl.*PostgreSQL connection URL/);
    await bad({ databaseUrl: 'postgres://u:p@127.0.0.1:5432/', umamiWebsiteId }, /databaseUrl.*must name the database/);
    await bad({ databaseUrl: `postgres://postgres:${FIXTURE_PASSWORD}@127.0.0.1:1/umami`, umamiWebsiteId }, /databaseUrl.*cannot connect to 127\.0\.0\.1:1\/umami: the connection was refused/);
    await bad({ databaseUrl: `postgres://postgres:${FIXTURE_PASSWORD}@127.0.0.1:5432/no_such_db_${process.pid}`, umamiWebsiteId }, /databaseUrl.*does not exist/);
    // A PostgreSQL database that is not Umami's (the shared test database).
    const notUmami = new URL(POSTGRES_URL);
    await bad({ databaseUrl: notUmami.toString(), umamiWebsiteId }, /databaseUrl.*is not an Umami database.*lacks website\./);
    await bad({ databaseUrl: umami.url, umamiWebsiteId: 'nope' }, /umamiWebsiteId/);
    await bad({ databaseUrl: umami.url, umamiWebsiteId: randomUUID() }, /umamiWebsiteId.*is not a website of the Umami database/);
    const empty = await insertWebsite(umami.client, 'Empty', 'empty.example');
    await bad({ databaseUrl: umami.url, umamiWebsiteId: empty }, /umamiWebsiteId.*\(Empty\) has no page views nor events/);
    await bad({ databaseUrl: umami.url }, /umamiWebsiteId/);
    await bad({ databaseUrl: umami.url, umamiWebsiteId, extra: 1 }, /extra/);
    expect(await countImports()).toBe(0);
    const listed = await t.request('POST', importsUrl(websiteId, '/umami/websites'), { token: owner.token, body: { databaseUrl: 'postgres://u:p@192.168.0.1/x' } });
    expectError(listed, 400, /192\.168\.0\.1.*IMPORT_UMAMI_HOSTS/);
  });

  it('answers 202 with the queued import, its URL sealed, then reads Umami in chunks of days, leaving out the day with native events', async () => {
    const created = await create({ databaseUrl: umami.url, umamiWebsiteId });
    expect(created.status, created.raw).toBe(202);
    expect(created.raw).not.toContain(FIXTURE_PASSWORD);
    const queued = created.body.data[0];
    importId = queued.id;
    expect(queued).toMatchObject({ source: 'umami', status: 'queued', progress: { daysTotal: 4, daysDone: 0, percent: 0 }, report: { source: { kind: 'umami', websiteId: umamiWebsiteId, websiteName: 'Old blog', eventsRead: 0 } } });
    const sealed = await t.db.selectFrom('import_connections').selectAll().where('import_id', '=', importId).execute();
    expect(sealed).toHaveLength(1);
    expect(sealed[0]!.ciphertext).not.toContain(FIXTURE_PASSWORD);
    expect(Buffer.from(sealed[0]!.ciphertext, 'base64').toString('latin1')).not.toContain(FIXTURE_PASSWORD);

    await runJobs();
    const done = (await t.request('GET', importsUrl(websiteId, `/${importId}`), { token: owner.token })).body.data[0];
    const today = data.days[3]!;
    const all = Object.values(expected).flat();
    const todays = all.filter((row) => row.day === today).length;
    expect(done).toMatchObject({
      status: 'done',
      error: null,
      firstDay: data.days[0],
      lastDay: data.days[2],
      label: `Umami Old blog ${data.days[0]} to ${data.days[2]}`,
      progress: { daysTotal: 4, daysDone: 4, percent: 100, rowsRead: all.length, rowsKept: all.length - todays, rowsSkipped: todays },
      report: { nativeDays: [today], skipped: { native_day: todays, too_long: 0 }, source: { eventsRead: data.events.length } },
    });
    expect(await t.db.selectFrom('import_connections').selectAll().where('import_id', '=', importId).execute()).toEqual([]);
    expect(t.logLines.join('\n')).not.toContain(FIXTURE_PASSWORD);
  });

  it('wrote each imported table number for number as computed from the Umami events', async () => {
    for (const [table, rows] of Object.entries(expected)) {
      const stored = await t.db
        .selectFrom(table as 'imported_visitors')
        .selectAll()
        .where('import_id', '=', importId)
        .execute();
      const clean = (stored as Record<string, unknown>[]).map(({ website_id: _w, import_id: _i, ...row }) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) && k !== 'day' ? Number(v) : v])));
      const sort = (list: Record<string, unknown>[]) => list.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).sort(([x], [y]) => x.localeCompare(y))))).sort();
      expect(sort(clean), table).toEqual(sort(rows.filter((row) => row.day !== data.days[3])));
    }
    // A few numbers by hand: day b has three visits (the one from day a goes on past midnight with one page view, a bounce there).
    const dayB = expected.imported_visitors!.find((row) => row.day === data.days[1]);
    expect(dayB).toEqual({ day: data.days[1], visitors: 3, visits: 3, pageviews: 5, bounces: 2, visit_duration: 320 });
    expect(expected.imported_browsers!.filter((row) => row.day === data.days[2]).map((row) => row.browser).sort()).toEqual(['Chrome', 'Safari']);
  });

  it('adds the imported days to the overview and the day series, number for number', async () => {
    const response = await read('/api/v1/analytics/overview', range());
    expect(response.headers['x-sightline-imported-data']).toBe('included');
    const merged = response.body.data[0];
    const past = expected.imported_visitors!.filter((row) => row.day !== data.days[3]);
    const sum = (field: string) => past.reduce((total, row) => total + Number(row[field]), 0);
    const sessions = nativeOverview.sessions + sum('visits');
    expect(merged.visitors).toBe(nativeOverview.visitors + sum('visitors'));
    expect(merged.pageviews).toBe(nativeOverview.pageviews + sum('pageviews'));
    expect(merged.sessions).toBe(sessions);
    const nativeBounces = Math.round((nativeOverview.bounce_rate * nativeOverview.sessions) / 100);
    expect(merged.bounce_rate).toBe(percentOf(nativeBounces + sum('bounces'), sessions));
    const nativeMillis = nativeOverview.avg_session_duration * nativeOverview.sessions;
    expect(merged.avg_session_duration).toBe(Math.round((nativeMillis + sum('visit_duration') * 1000) / sessions));

    const series = (await read('/api/v1/analytics/timeseries', { ...range(), interval: 'day', fields: 'visitors,pageviews,sessions' })).body.data;
    for (const [index, day] of data.days.slice(0, 3).entries()) {
      const row = past.find((r) => r.day === day)!;
      expect(series[index], day).toMatchObject({ visitors: row.visitors, pageviews: row.pageviews, sessions: row.visits });
    }
  });

  it('adds the imported rows to the breakdowns, summed with the native rows of the same key', async () => {
    const checks: [string, string, (row: Record<string, unknown>) => string, string, (row: Record<string, string | number>) => string][] = [
      ['pages', 'imported_pages', (r) => `${r.hostname}${r.path}`, 'visitors', (r) => `${r.hostname}${r.page}`],
      ['entry-pages', 'imported_entry_pages', (r) => String(r.path), 'visitors', (r) => String(r.entry_page)],
      ['referrers', 'imported_sources', (r) => String(r.referrer ?? 'Direct / None'), 'visitors', (r) => String(shownLabel('referrer', String(r.source)))],
      ['countries', 'imported_locations', (r) => String(r.countryCode), 'visitors', (r) => String(r.country)],
      ['devices', 'imported_devices', (r) => String(r.device), 'visitors', (r) => String(r.device)],
      ['browsers', 'imported_browsers', (r) => String(r.browser), 'visitors', (r) => String(shownLabel('browser', String(r.browser)))],
      ['operating-systems', 'imported_operating_systems', (r) => String(r.operating_system), 'visitors', (r) => String(shownLabel('os', String(r.operating_system)))],
      ['goals', 'imported_custom_events', (r) => String(r.goal), 'completions', (r) => String(r.name)],
    ];
    for (const [kind, table, keyOfRead, field, keyOfImported] of checks) {
      const want = new Map<string, number>();
      for (const row of nativeBreakdowns[kind]!) want.set(keyOfRead(row), Number(row[field]));
      for (const [key, count] of importedBy(table, keyOfImported, field === 'completions' ? 'events' : 'visitors')) want.set(key, (want.get(key) ?? 0) + count);
      const response = await breakdown(kind);
      expect(response.headers['x-sightline-imported-data'], kind).toBe('included');
      const got = new Map<string, number>(response.body.data.map((row: Record<string, unknown>) => [keyOfRead(row), Number(row[field])]));
      expect(Object.fromEntries(got), kind).toEqual(Object.fromEntries(want));
    }
    // The names Sightline's own events carry: Umami's chrome and crios are one Chrome, its laptop a desktop, google.de Google.
    const browsers = (await breakdown('browsers')).body.data.map((row: { browser: string }) => row.browser);
    expect(browsers).toEqual(expect.arrayContaining(['Chrome', 'Firefox', 'Safari']));
    expect((await breakdown('devices')).body.data.map((row: { device: string }) => row.device)).not.toContain('laptop');
  });

  it('refuses the same Umami website again with a 409 and changes nothing', async () => {
    const before = await overview();
    const again = await create({ databaseUrl: umami.url, umamiWebsiteId });
    expectError(again, 409, new RegExp(importId));
    await runJobs();
    expect(await countImports()).toBe(1);
    expect(await overview()).toEqual(before);
  });

  it('deletes the import: gone from the reads, its rows removed; then imports again from a stop and a crash, inserting nothing twice', async () => {
    expect((await t.request('DELETE', importsUrl(websiteId, `/${importId}`), { token: owner.token })).status).toBe(200);
    await runJobs();
    expect(await countImports()).toBe(0);
    expect(await overview()).toEqual(nativeOverview);

    // Again, one day per chunk: stopped after its first chunk, then an instance dies after one more, then another ends it.
    // Made by the service, so the running worker is not woken to take the job first.
    const created = { body: { data: [await createUmamiImport(t.db, t.app.keyring, ['127.0.0.1'], websiteId, owner.id, { databaseUrl: umami.url, umamiWebsiteId, label: 'Again' })] } };
    const job = await claimNextJob(t.db, IMPORT_JOB, new Date().toISOString(), { owner: 'first', ms: 60_000 });
    const row = async () => (await t.db.selectFrom('imports').selectAll().where('id', '=', created.body.data[0]!.id).executeTakeFirstOrThrow());
    let chunks = 0;
    const context = (lease: string, stopAfter: number) => ({
      db: t.db, store: t.app.eventStore, lease: { owner: lease, ms: 60_000 }, keyring: t.app.keyring, allowedHosts: ['127.0.0.1'], chunkDays: 1, stopping: () => ++chunks >= stopAfter,
    });
    expect(await runUmamiImportJob(context('first', 1), job!, await row())).toBe('stopped');
    await releaseJob(t.db, job!, { owner: 'first', ms: 60_000 });
    expect((await row()).days_done).toBe(1);
    chunks = 0;
    const again = await claimNextJob(t.db, IMPORT_JOB, new Date().toISOString(), { owner: 'second', ms: 60_000 });
    expect(await runUmamiImportJob(context('second', 1), again!, await row())).toBe('stopped');
    const later = new Date(Date.now() + 120_000).toISOString();
    const taken = await claimNextJob(t.db, IMPORT_JOB, later, { owner: 'third', ms: 60_000 });
    expect(taken?.id).toBe(job!.id);
    expect(await runUmamiImportJob(context('third', Number.POSITIVE_INFINITY), taken!, await row())).toBe('done');
    const done = await row();
    expect(done).toMatchObject({ status: 'done', days_done: 4 });
    const past = Object.values(expected).flat().filter((r) => r.day !== data.days[3]);
    expect(done.rows_kept).toBe(past.length);
    const stored = await t.db.selectFrom('imported_pages').select((eb) => eb.fn.countAll().as('n')).where('import_id', '=', done.id).executeTakeFirst();
    expect(Number(stored?.n)).toBe(expected.imported_pages!.filter((r) => r.day !== data.days[3]).length);
    const visitors = expected.imported_visitors!.filter((r) => r.day !== data.days[3]).reduce((sum, r) => sum + Number(r.visitors), 0);
    expect((await overview()).visitors).toBe(nativeOverview.visitors + visitors);
  });

  it('fails an import whose Umami database went away, with the reason, after its retries', async () => {
    const other = await createWebsite(t, owner.token);
    const spare = await createUmamiDatabase();
    const spareWebsite = await insertWebsite(spare.client, 'Short-lived', other.domain);
    const session = { id: randomUUID(), browser: 'firefox', os: 'Linux', device: 'desktop', country: 'DE', region: null };
    await insertSessions(spare.client, spareWebsite, [session]);
    await insertEvents(spare.client, spareWebsite, [{ sessionId: session.id, visitId: randomUUID(), at: DateTime.now().minus({ days: 5 }), type: 1, path: '/', hostname: other.domain }]);
    const created = await t.request('POST', importsUrl(other.id, '/umami'), { token: owner.token, body: { databaseUrl: spare.url, umamiWebsiteId: spareWebsite } });
    expect(created.status, created.raw).toBe(202);
    await spare.drop();
    for (let attempt = 0; attempt < 20; attempt += 1) {
      await runJobs();
      const item = (await t.request('GET', importsUrl(other.id, `/${created.body.data[0].id}`), { token: owner.token })).body.data[0];
      if (item.status === 'failed') {
        expect(item.error).toMatch(/cannot connect to 127\.0\.0\.1:5432\/umami_fixture_.*does not exist/);
        expect(item.error).not.toContain(FIXTURE_PASSWORD);
        expect(await t.db.selectFrom('import_connections').selectAll().where('website_id', '=', other.id).execute()).toEqual([]);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the import did not fail');
  });

  it('fails at once, with the reason, an import whose host the operator no longer allows when its job runs', async () => {
    const other = await createWebsite(t, owner.token);
    const created = await createUmamiImport(t.db, t.app.keyring, ['127.0.0.1'], other.id, owner.id, { databaseUrl: umami.url, umamiWebsiteId });
    const job = await claimNextJob(t.db, IMPORT_JOB, new Date().toISOString(), { owner: 'strict', ms: 60_000 });
    expect(job?.id).toBeDefined();
    const row = await t.db.selectFrom('imports').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    const context = { db: t.db, store: t.app.eventStore, lease: { owner: 'strict', ms: 60_000 }, keyring: t.app.keyring, allowedHosts: ['umami.internal'], chunkDays: 7, stopping: () => false };
    await expect(runUmamiImportJob(context, job!, row)).rejects.toThrow(/may no longer be read: .*127\.0\.0\.1.*IMPORT_UMAMI_HOSTS/);
    expect(await t.db.selectFrom('imported_visitors').selectAll().where('import_id', '=', created.id).execute()).toEqual([]);
  });

  describe('access', () => {
    it('answers 401 without a credential', async () => {
      expectError(await t.request('POST', importsUrl(websiteId, '/umami'), { body: { databaseUrl: umami.url, umamiWebsiteId } }), 401);
      expectError(await t.request('POST', importsUrl(websiteId, '/umami/websites'), { body: { databaseUrl: umami.url } }), 401);
    });

    it('answers 403 for a missing permission, a viewer, and a token of another website', async () => {
      const noWrite = await createToken(t, owner, allBut('settings:write'));
      expectError(await create({ databaseUrl: umami.url, umamiWebsiteId }, noWrite), 403, /settings:write/);
      expectError(await t.request('POST', importsUrl(websiteId, '/umami/websites'), { token: noWrite, body: { databaseUrl: umami.url } }), 403, /settings:write/);
      const viewer = await createAccount(t);
      await addMember(t, websiteId, viewer.id, 'viewer');
      expectError(await create({ databaseUrl: umami.url, umamiWebsiteId }, viewer.token), 403, /viewer/);
      const other = await createWebsite(t, owner.token);
      const elsewhere = await createToken(t, owner, ['*'], [other.id]);
      expectError(await create({ databaseUrl: umami.url, umamiWebsiteId }, elsewhere), 403);
      expectError(await t.request('POST', importsUrl(websiteId, '/umami/websites'), { token: elsewhere, body: { databaseUrl: umami.url } }), 403);
    });

    it("answers 404 for another account's website", async () => {
      const stranger = await createAccount(t);
      expectError(await create({ databaseUrl: umami.url, umamiWebsiteId }, stranger.token), 404);
      expectError(await t.request('POST', importsUrl(websiteId, '/umami/websites'), { token: stranger.token, body: { databaseUrl: umami.url } }), 404);
      expectError(await t.request('POST', importsUrl(UNKNOWN_ID, '/umami'), { token: owner.token, body: { databaseUrl: umami.url, umamiWebsiteId } }), 404);
    });
  });
});

describe('IMPORT_UMAMI_HOSTS and IMPORT_UMAMI_CHUNK_DAYS', () => {
  it('default to the loopback names and 7 days, read a list of names and addresses, and refuse what is not one', () => {
    expect(loadConfig({}).imports).toMatchObject({ umamiHosts: DEFAULT_UMAMI_HOSTS, umamiChunkDays: 7 });
    expect(loadConfig({ IMPORT_UMAMI_HOSTS: ' DB.Internal, 10.0.0.5 ,[::1]', IMPORT_UMAMI_CHUNK_DAYS: '30' }).imports).toMatchObject({
      umamiHosts: ['db.internal', '10.0.0.5', '::1'],
      umamiChunkDays: 30,
    });
    expect(() => loadConfig({ IMPORT_UMAMI_HOSTS: 'postgres://db.internal/umami' })).toThrow(ConfigError);
    expect(() => loadConfig({ IMPORT_UMAMI_CHUNK_DAYS: '0' })).toThrow(ConfigError);
  });
});
