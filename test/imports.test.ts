import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { percentOf } from '../src/lib/percent.ts';
import { type ApiResponse, type TestApp, settleRollups, useTestApp } from './helpers/app.ts';
import { pageview, send } from './helpers/browser-events.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { UNKNOWN_ID, addMember, createAccount, createToken, createWebsite, expectError } from './helpers/factories.ts';
import { csv, plausibleExport, zipOf } from './helpers/plausible-export.ts';
import { claimNextJob, releaseJob } from '../src/modules/integrations/job-queue.ts';
import { runImportJob } from '../src/modules/imports/import-job.ts';
import { IMPORT_JOB } from '../src/modules/imports/imports.repository.ts';
import { createImport } from '../src/modules/imports/imports.service.ts';

// Issue 37 item 1: Plausible's CSV export imported into a website, in the background, merged into
// the reads for the days it covers, never counted twice with the website's own events, refused
// when imported again, and gone from the reads once deleted.

const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const importsUrl = (websiteId: string, importId?: string) => `/api/v1/admin/websites/${websiteId}/imports${importId ? `/${importId}` : ''}`;

async function upload(t: TestApp, token: string, websiteId: string, zip: Buffer, contentType = 'application/zip'): Promise<ApiResponse> {
  const response = await t.app.inject({
    method: 'POST',
    url: importsUrl(websiteId),
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    payload: zip,
  });
  let body: any = null;
  try {
    body = response.json();
  } catch {
    body = null;
  }
  return { status: response.statusCode, body, headers: response.headers, raw: response.body };
}

async function runJobs(t: TestApp): Promise<void> {
  t.app.importJobs!.wake();
  await t.app.importJobs!.idle();
}

describeEachEventEngine('importing Plausible\'s CSV export', (engine) => {
  const t = useTestApp(engine, { imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 3 } });
  const today = DateTime.now().setZone('Europe/Paris');
  const days = [3, 2, 1, 0].map((back) => today.minus({ days: back }).toISODate()!);
  const range = { startAt: days[0]!, endAt: days[3]! };
  const zip = zipOf(plausibleExport(days));
  let owner: Awaited<ReturnType<typeof createAccount>>;
  let websiteId: string;
  let importId: string;
  let nativeOverview: { visitors: number; pageviews: number; sessions: number; bounce_rate: number; avg_session_duration: number };
  let nativeSeries: { name: string; visitors: number; pageviews: number; sessions: number }[];
  let domain: string;
  const nativeBreakdowns: Record<string, Record<string, unknown>[]> = {};
  /** What each breakdown gets from the three imported days (0, 1, 2 of the fixture), by its key fields. */
  const IMPORTED: Record<string, { keys: string[]; rows: () => Record<string, unknown>[] }> = {
    pages: {
      keys: ['hostname', 'path'],
      rows: () => [
        { hostname: 'example.com', path: '/', visitors: 21, pageviews: 39 },
        { hostname: domain, path: '/pricing', visitors: 12, pageviews: 24 },
      ],
    },
    'entry-pages': { keys: ['hostname', 'path'], rows: () => [{ hostname: domain, path: '/', visitors: 21, pageviews: 36 }] },
    'exit-pages': { keys: ['hostname', 'path'], rows: () => [{ hostname: domain, path: '/pricing', visitors: 12, pageviews: 15 }] },
    referrers: { keys: ['referrer'], rows: () => [{ referrer: 'Google', visitors: 18, pageviews: 27 }, { referrer: 'Newsletter', visitors: 6, pageviews: 12 }] },
    campaigns: {
      keys: ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'ref', 'source', 'via'],
      rows: () => [
        { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', ref: '', source: '', via: '', visitors: 18, pageviews: 27 },
        { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', utm_term: '', utm_content: '', ref: '', source: '', via: '', visitors: 6, pageviews: 12 },
      ],
    },
    countries: { keys: ['countryCode'], rows: () => [{ countryCode: 'DE', visitors: 27, pageviews: 45 }, { countryCode: 'FR', visitors: 6, pageviews: 15 }] },
    regions: { keys: ['region', 'countryCode'], rows: () => [{ region: 'DE-BE', countryCode: 'DE', visitors: 27, pageviews: 45 }, { region: 'FR-IDF', countryCode: 'FR', visitors: 6, pageviews: 15 }] },
    devices: { keys: ['device'], rows: () => [{ device: 'desktop', visitors: 24, pageviews: 42 }, { device: 'mobile', visitors: 9, pageviews: 18 }] },
    browsers: { keys: ['browser'], rows: () => [{ browser: 'Firefox', visitors: 30, pageviews: 54 }] },
    'operating-systems': { keys: ['operating_system'], rows: () => [{ operating_system: 'GNU/Linux', visitors: 15, pageviews: 27 }] },
    goals: { keys: ['goal'], rows: () => [{ goal: 'Signup', visitors: 9, completions: 12 }] },
  };
  /** A campaigns row's keys (under `campaign`) beside its counts, as the other breakdowns have them. */
  const flat = ({ campaign, ...row }: Record<string, unknown>) => ({ ...(campaign as Record<string, unknown> | undefined), ...row });
  const breakdown = async (kind: string, query: Record<string, string> = {}) => read(`/api/v1/analytics/${kind}`, { ...range, ...query });

  const read = async (path: string, query: Record<string, string> = {}) => {
    const response = await t.request('GET', path, { token: owner.token, query: { websiteId, ...query } });
    expect(response.status, response.raw).toBe(200);
    return response;
  };
  const overview = async (query: Record<string, string> = range) => (await read('/api/v1/analytics/overview', query)).body.data[0];
  const series = async () => (await read('/api/v1/analytics/timeseries', { ...range, interval: 'day', fields: 'visitors,pageviews,sessions' })).body.data;
  const countImports = async () => Number((await t.db.selectFrom('imports').select((eb) => eb.fn.countAll().as('n')).where('website_id', '=', websiteId).executeTakeFirst())?.n);

  it('sets up a website with its own page view today and reads it before any import', async () => {
    owner = await createAccount(t);
    websiteId = (await createWebsite(t, owner.token)).id;
    const website = (await t.request('GET', `/api/v1/admin/websites/${websiteId}`, { token: owner.token })).body.data[0];
    expect((await send(t, pageview(website))).status).toBe(200);
    await settleRollups(t)();
    nativeOverview = await overview();
    expect(nativeOverview.visitors).toBe(1);
    nativeSeries = await series();
    domain = website.domain;
    for (const kind of Object.keys(IMPORTED)) nativeBreakdowns[kind] = (await breakdown(kind)).body.data;
    expect((await read('/api/v1/analytics/overview', range)).headers['x-sightline-imported-data']).toBeUndefined();
  });

  it('refuses what is not an export with a 400 naming what, storing nothing', async () => {
    expectError(await upload(t, owner.token, websiteId, Buffer.from('not a zip at all')), 400, /body: is not a zip/);
    expectError(await upload(t, owner.token, websiteId, zipOf({ 'notes.txt': 'hello' })), 400, /no imported_\*\.csv/);
    const badHeader = zipOf({ 'imported_visitors_20250101_20250102.csv': csv({ header: ['date', 'visitors'], rows: [['2025-01-01', 1]] }) });
    const refused = await upload(t, owner.token, websiteId, badHeader);
    expectError(refused, 400, /imported_visitors_20250101_20250102\.csv: its header lacks pageviews, bounces, visits, visit_duration/);
    expect(refused.body.error.details?.[0]?.path ?? refused.body.error.message).toMatch(/body\.imported_visitors/);
    expectError(await upload(t, owner.token, websiteId, Buffer.alloc(0)), 400);
    expect(await countImports()).toBe(0);
  });

  it('answers 202 with the queued import, then reads it in chunks in the background, skipping the day with native events', async () => {
    const created = await upload(t, owner.token, websiteId, zip);
    expect(created.status, created.raw).toBe(202);
    const queued = created.body.data[0];
    importId = queued.id;
    expect(queued).toMatchObject({ websiteId, source: 'plausible-csv', status: 'queued', progress: { filesTotal: 10, filesDone: 0, rowsRead: 0, percent: 0 } });
    await runJobs(t);
    const done = (await t.request('GET', importsUrl(websiteId, importId), { token: owner.token })).body.data[0];
    // 4 days x (1 visitors + 2 pages + 1 entry + 1 exit + 2 sources + 2 locations + 2 devices + 1 browser + 1 os + 1 event) rows.
    expect(done).toMatchObject({
      status: 'done',
      firstDay: days[0],
      lastDay: days[2],
      error: null,
      progress: { filesTotal: 10, filesDone: 10, rowsRead: 56, rowsKept: 42, rowsSkipped: 14, percent: 100 },
      report: { ignoredFiles: [], nativeDays: [days[3]], skipped: { native_day: 14, invalid_date: 0, invalid_number: 0, too_long: 0 } },
    });
    expect(done.report.files.find((file: { table: string }) => file.table === 'imported_pages')).toMatchObject({ rowsRead: 8, rowsKept: 6, rowsSkipped: 2 });
    expect(await t.db.selectFrom('import_uploads').selectAll().where('import_id', '=', importId).execute()).toEqual([]);
    const listed = (await t.request('GET', importsUrl(websiteId), { token: owner.token })).body.data;
    expect(listed.map((item: { id: string }) => item.id)).toEqual([importId]);
  });

  it('adds the imported days to the overview, number for number, beside the native day', async () => {
    const response = await read('/api/v1/analytics/overview', range);
    expect(response.headers['x-sightline-imported-data']).toBe('included');
    const merged = response.body.data[0];
    const sessions = nativeOverview.sessions + 39;
    expect(merged.visitors).toBe(nativeOverview.visitors + 33);
    expect(merged.pageviews).toBe(nativeOverview.pageviews + 63);
    expect(merged.sessions).toBe(sessions);
    const nativeBounces = Math.round((nativeOverview.bounce_rate * nativeOverview.sessions) / 100);
    expect(merged.bounce_rate).toBe(percentOf(nativeBounces + 9, sessions));
    const nativeMillis = nativeOverview.avg_session_duration * nativeOverview.sessions;
    expect(merged.avg_session_duration).toBe(Math.round((nativeMillis + 360_000) / sessions));
    // All time holds the same days.
    expect((await overview({})).visitors).toBe(nativeOverview.visitors + 33);
  });

  it('adds each imported day to its bucket of the day series, and nothing to the native day', async () => {
    const merged = await series();
    expect(merged.map((bucket: { visitors: number }) => bucket.visitors)).toEqual([
      nativeSeries[0]!.visitors + 10,
      nativeSeries[1]!.visitors + 11,
      nativeSeries[2]!.visitors + 12,
      nativeSeries[3]!.visitors,
    ]);
    expect(merged.map((bucket: { pageviews: number }) => bucket.pageviews)).toEqual([20, 21, 22, nativeSeries[3]!.pageviews]);
    expect(merged.map((bucket: { sessions: number }) => bucket.sessions)).toEqual([12, 13, 14, nativeSeries[3]!.sessions]);
    const hourly = await read('/api/v1/analytics/timeseries', { ...range, interval: 'hour', fields: 'visitors' });
    expect(hourly.headers['x-sightline-imported-data']).toBe('left-out: interval');
  });

  it('adds the imported rows to each breakdown with an imported table, summed with the native rows of the same key', async () => {
    for (const [kind, { keys, rows }] of Object.entries(IMPORTED)) {
      const expected = nativeBreakdowns[kind]!.map(flat);
      for (const imported of rows()) {
        const same = expected.find((row) => keys.every((key) => row[key] === imported[key]));
        if (!same) {
          expected.push({ ...imported });
          continue;
        }
        for (const [field, value] of Object.entries(imported)) if (!keys.includes(field)) same[field] = Number(same[field]) + Number(value);
      }
      const response = await breakdown(kind);
      expect(response.headers['x-sightline-imported-data'], kind).toBe('included');
      const actual: Record<string, unknown>[] = response.body.data.map(flat);
      expect(actual.length, kind).toBe(expected.length);
      expect(response.body.pagination.total, kind).toBe(expected.length);
      for (const want of expected) {
        const got = actual.find((row) => keys.every((key) => row[key] === want[key]));
        expect(got, `${kind} ${JSON.stringify(want)}`).toBeDefined();
        for (const field of ['visitors', 'pageviews', 'completions']) if (field in want) expect(got![field], `${kind} ${field}`).toBe(want[field]);
      }
      const visitors = actual.map((row) => Number(row.visitors));
      expect(visitors, `${kind} ranked by visitors`).toEqual([...visitors].sort((a, b) => b - a));
    }
  });

  it('keeps a breakdown filter on its own dimension, pages by limit and offset, and leaves imported data out elsewhere', async () => {
    const pricing = await breakdown('pages', { filter_page: 'is:/pricing' });
    expect(pricing.headers['x-sightline-imported-data']).toBe('included');
    expect(pricing.body.data).toEqual([expect.objectContaining({ hostname: domain, path: '/pricing', visitors: 13, pageviews: 25 })]);
    const top = await breakdown('pages', { limit: '1' });
    expect(top.body.data).toEqual([expect.objectContaining({ hostname: 'example.com', path: '/', visitors: 21 })]);
    expect(top.body.pagination).toMatchObject({ limit: 1, offset: 0, total: 2 });
    const second = await breakdown('pages', { limit: '1', offset: '1' });
    expect(second.body.data).toEqual([expect.objectContaining({ path: '/pricing', visitors: 13 })]);
    const german = await breakdown('countries', { filter_country: 'is:DE' });
    expect(german.body.data).toEqual([expect.objectContaining({ countryCode: 'DE', visitors: 27 })]);
    const crossed = await breakdown('pages', { filter_country: 'is:DE' });
    expect(crossed.headers['x-sightline-imported-data']).toBe('left-out: filters');
    expect(crossed.body.data).toEqual([]);
    expect((await breakdown('cities')).headers['x-sightline-imported-data']).toBe('left-out: breakdown');
  });

  it('leaves imported data out of a filtered overview, and says so', async () => {
    const response = await read('/api/v1/analytics/overview', { ...range, filter_device: 'is:desktop' });
    expect(response.headers['x-sightline-imported-data']).toBe('left-out: filters');
    expect(response.body.data[0].visitors).toBeLessThanOrEqual(nativeOverview.visitors);
  });

  it('refuses the same zip again with a 409 and changes nothing', async () => {
    const again = await upload(t, owner.token, websiteId, zip);
    expectError(again, 409, new RegExp(importId));
    await runJobs(t);
    expect(await countImports()).toBe(1);
    expect((await overview()).visitors).toBe(nativeOverview.visitors + 33);
  });

  it('deletes the import: gone from the reads at once, its rows removed by its job', async () => {
    const deleted = await t.request('DELETE', importsUrl(websiteId, importId), { token: owner.token });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data[0]).toMatchObject({ id: importId });
    expect(await overview()).toEqual(nativeOverview);
    expect((await t.request('GET', importsUrl(websiteId), { token: owner.token })).body.data).toEqual([]);
    expectError(await t.request('GET', importsUrl(websiteId, importId), { token: owner.token }), 404);
    await runJobs(t);
    expect(await countImports()).toBe(0);
    expect(await t.db.selectFrom('imported_pages').selectAll().where('website_id', '=', websiteId).execute()).toEqual([]);
    expect(await series()).toEqual(nativeSeries);
    for (const kind of Object.keys(IMPORTED)) expect((await breakdown(kind)).body.data, kind).toEqual(nativeBreakdowns[kind]);
  });

  it('imports the same zip again once the earlier import is deleted, sent as base64 in JSON (as the MCP tool sends it)', async () => {
    expectError(await t.request('POST', importsUrl(websiteId), { token: owner.token, body: { zipBase64: '%%%' } }), 400, /zipBase64/);
    const created = await t.request('POST', importsUrl(websiteId), { token: owner.token, body: { zipBase64: zip.toString('base64') } });
    expect(created.status, created.raw).toBe(202);
    await runJobs(t);
    expect((await overview()).visitors).toBe(nativeOverview.visitors + 33);
    expect((await t.request('DELETE', importsUrl(websiteId, created.body.data[0].id), { token: owner.token })).status).toBe(200);
    await runJobs(t);
    expect(await overview()).toEqual(nativeOverview);
  });

  it('skips rows with bad values and fails an import whose CSV breaks, with the reason, never a 5xx', async () => {
    const header = ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'];
    const skipping = zipOf({
      'imported_visitors.csv': csv({ header, rows: [['2020-02-30', 1, 1, 0, 1, 0], ['2020-02-01', -1, 1, 0, 1, 0], ['2020-02-02', 2, 3, 1, 2, 10]] }),
      'README.txt': 'not a table',
    });
    const first = await upload(t, owner.token, websiteId, skipping);
    expect(first.status, first.raw).toBe(202);
    await runJobs(t);
    const read1 = (await t.request('GET', importsUrl(websiteId, first.body.data[0].id), { token: owner.token })).body.data[0];
    expect(read1).toMatchObject({ status: 'done', progress: { rowsRead: 3, rowsKept: 1, rowsSkipped: 2 }, report: { ignoredFiles: ['README.txt'], skipped: { invalid_date: 1, invalid_number: 1 } } });
    expect((await overview({ startAt: '2020-02-02', endAt: '2020-02-02' })).visitors).toBe(2);

    const broken = zipOf({ 'imported_visitors.csv': `${header.join(',')}\n2020-03-01,1,1,0,1,0\n2020-03-02,"2,1,0,1,0\n` });
    const second = await upload(t, owner.token, websiteId, broken);
    expect(second.status, second.raw).toBe(202);
    await runJobs(t);
    const failed = (await t.request('GET', importsUrl(websiteId, second.body.data[0].id), { token: owner.token })).body.data[0];
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/imported_visitors\.csv/);
    // A failed import's rows are never read.
    expect((await overview({ startAt: '2020-03-01', endAt: '2020-03-01' })).visitors).toBe(0);
  });

  it('answers a zip whose data is damaged with a 400 or a failed import naming the file, never a 5xx', async () => {
    const rows = Array.from({ length: 400 }, (_, i) => [`2019-0${1 + (i % 9)}-1${i % 10}`, i, i, 0, i, i]);
    const damaged = zipOf({ 'imported_visitors.csv': csv({ header: ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'], rows }) });
    // A run of bytes in the middle of the compressed data flipped: inflating or the CRC check fails.
    for (let at = Math.floor(damaged.length / 2); at < Math.floor(damaged.length / 2) + 16; at += 1) damaged[at] = damaged[at]! ^ 0xff;
    const answer = await upload(t, owner.token, websiteId, damaged);
    expect([400, 202], answer.raw).toContain(answer.status);
    if (answer.status === 400) {
      expect(answer.body.error.message).toMatch(/imported_visitors\.csv|zip/);
      return;
    }
    await runJobs(t);
    const failed = (await t.request('GET', importsUrl(websiteId, answer.body.data[0].id), { token: owner.token })).body.data[0];
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/imported_visitors\.csv/);
  });

  it('goes on from the last committed chunk after a stop and after a crash, inserting nothing twice', async () => {
    const other = await createWebsite(t, owner.token);
    const created = await createImport(t.db, other.id, owner.id, zipOf(plausibleExport(['2021-06-01', '2021-06-02', '2021-06-03'])), 'resumed');
    const job = await claimNextJob(t.db, IMPORT_JOB, new Date().toISOString(), { owner: 'first', ms: 60_000 });
    expect(job?.id).toBeDefined();
    let chunks = 0;
    const context = (owner: string, stopAfter: number) => ({ db: t.db, store: t.app.eventStore, lease: { owner, ms: 60_000 }, chunkRows: 3, stopping: () => ++chunks >= stopAfter });
    // A stop after the first chunk: the job is handed back with its cursor.
    expect(await runImportJob(context('first', 1), job!)).toBe('stopped');
    await releaseJob(t.db, job!, { owner: 'first', ms: 60_000 });
    const stopped = (await t.request('GET', importsUrl(other.id, created.id), { token: owner.token })).body.data[0];
    expect(stopped.status).toBe('running');
    expect(stopped.progress.rowsRead).toBe(3);
    // Taken again, then the instance dies after three more chunks without a word (its lease stays).
    chunks = 0;
    const again = await claimNextJob(t.db, IMPORT_JOB, new Date().toISOString(), { owner: 'second', ms: 60_000 });
    expect(again?.id).toBe(job!.id);
    expect(await runImportJob(context('second', 3), again!)).toBe('stopped');
    // Once its lease is over, another instance takes the job over and ends it.
    const later = new Date(Date.now() + 120_000).toISOString();
    const taken = await claimNextJob(t.db, IMPORT_JOB, later, { owner: 'third', ms: 60_000 });
    expect(taken?.id).toBe(job!.id);
    expect(await runImportJob({ ...context('third', Number.POSITIVE_INFINITY) }, taken!)).toBe('done');
    const done = (await t.request('GET', importsUrl(other.id, created.id), { token: owner.token })).body.data[0];
    expect(done).toMatchObject({ status: 'done', progress: { rowsRead: 42, rowsKept: 42, rowsSkipped: 0 } });
    const stored = await t.db.selectFrom('imported_pages').select((eb) => eb.fn.countAll().as('n')).where('website_id', '=', other.id).executeTakeFirst();
    expect(Number(stored?.n)).toBe(6);
    const visitors = await t.request('GET', '/api/v1/analytics/overview', { token: owner.token, query: { websiteId: other.id, startAt: '2021-06-01', endAt: '2021-06-03' } });
    expect(visitors.body.data[0].visitors).toBe(33);
  });

  describe('access', () => {
    it('answers 401 without a credential', async () => {
      expectError(await t.request('GET', importsUrl(websiteId)), 401);
      expectError(await upload(t, 'dft_nope', websiteId, zip), 401);
    });

    it('answers 403 for a missing permission, a viewer writing, and a token of another website', async () => {
      expectError(await t.request('GET', importsUrl(websiteId), { token: await createToken(t, owner, allBut('settings:read')) }), 403, /settings:read/);
      const noWrite = await createToken(t, owner, allBut('settings:write'));
      expectError(await upload(t, noWrite, websiteId, zip), 403, /settings:write/);
      expectError(await t.request('DELETE', importsUrl(websiteId, UNKNOWN_ID), { token: noWrite }), 403, /settings:write/);
      const viewer = await createAccount(t);
      await addMember(t, websiteId, viewer.id, 'viewer');
      expect((await t.request('GET', importsUrl(websiteId), { token: viewer.token })).status).toBe(200);
      expectError(await upload(t, viewer.token, websiteId, zip), 403, /viewer/);
      expectError(await t.request('DELETE', importsUrl(websiteId, UNKNOWN_ID), { token: viewer.token }), 403, /viewer/);
      const other = await createWebsite(t, owner.token);
      const elsewhere = await createToken(t, owner, ['*'], [other.id]);
      expectError(await t.request('GET', importsUrl(websiteId), { token: elsewhere }), 403);
      expectError(await upload(t, elsewhere, websiteId, zip), 403);
      expect(await countImports()).toBe(3);
    });

    it('answers 404 for another account\'s website and another website\'s import', async () => {
      const stranger = await createAccount(t);
      expectError(await t.request('GET', importsUrl(websiteId), { token: stranger.token }), 404);
      expectError(await upload(t, stranger.token, websiteId, zip), 404);
      const own = await createWebsite(t, stranger.token);
      const theirs = (await t.request('GET', importsUrl(websiteId), { token: owner.token })).body.data[0].id;
      expectError(await t.request('GET', importsUrl(own.id, theirs), { token: stranger.token }), 404);
      expectError(await t.request('DELETE', importsUrl(own.id, theirs), { token: stranger.token }), 404);
      expectError(await t.request('GET', importsUrl(websiteId, UNKNOWN_ID), { token: owner.token }), 404);
    });

    it('answers 400 naming the field for a bad id or label, and 415 for another content type', async () => {
      expectError(await t.request('GET', importsUrl(websiteId, 'nope'), { token: owner.token }), 400, /importId/);
      const long = await t.app.inject({
        method: 'POST',
        url: `${importsUrl(websiteId)}?label=${'x'.repeat(201)}`,
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/zip' },
        payload: zip,
      });
      expect(long.statusCode).toBe(400);
      expect(long.body).toMatch(/label/);
      expect((await upload(t, owner.token, websiteId, zip, 'text/csv')).status).toBe(415);
      expect(await countImports()).toBe(3);
    });
  });
});
