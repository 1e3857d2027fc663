import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { claimNextJob, releaseJob } from '../src/modules/integrations/job-queue.ts';
import { SIGHTLINE_IMPORT_JOB } from '../src/modules/imports/imports.repository.ts';
import { derivedId } from '../src/modules/imports/sightline-import-rows.ts';
import { NO_EVENT_HOOKS, runSightlineImportJob } from '../src/modules/imports/sightline-import-job.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeWithClickHouse } from './helpers/clickhouse.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createToken, createWebsite, expectError, newEvent } from './helpers/factories.ts';
import { type ExportRecord, exportFile, pageviewRecord, paymentRecord, websiteRecord } from './helpers/sightline-export-file.ts';
import { runImports, uploadExport } from './helpers/sightline-import.ts';

// Importing Sightline's own raw export (issue 37 item 1, third source): the upload checked before
// anything is stored, the records stored as the website's own rows in chunks with their progress,
// a re-run that changes nothing, ids that never clash between websites, and the access rules of
// every website route.

const NDJSON = 'application/x-ndjson';
const importsUrl = (websiteId: string, importId?: string) => `/api/v1/admin/websites/${websiteId}/imports${importId ? `/${importId}` : ''}`;
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const hex = (n: number) => n.toString(16).padStart(24, '0');

/** Twelve page views of four visitors over three days of March 2026, and two payments. */
function records(): ExportRecord[] {
  const events = Array.from({ length: 12 }, (_, i) =>
    pageviewRecord(hex(0xa000 + i), `v${i % 4}`, new Date(Date.UTC(2026, 2, 10 + (i % 3), 9, i)).toISOString(), { path: `/p${i % 5}` }),
  );
  return [
    websiteRecord(),
    ...events,
    paymentRecord(hex(0xb001), 'tx-1', 'v0', 5000, '2026-03-10T10:00:00.000Z'),
    paymentRecord(hex(0xb002), 'tx-2', 'v1', 2500, '2026-03-11T10:00:00.000Z', { refunded: true }),
  ];
}

describeEachEngine('importing Sightline\'s own export', (engine) => {
  const t: TestApp = useTestApp(engine, { imports: { jobs: true, maxUploadBytes: 64 * 1024, chunkRows: 5 } });
  const range = { startAt: '2026-03-01', endAt: '2026-03-31' };
  const overview = async (token: string, websiteId: string) =>
    (await t.request('GET', '/api/v1/analytics/overview', { token, query: { websiteId, ...range, fields: 'visitors,pageviews,revenue,payments' } })).body.data[0];
  const countImports = async (websiteId: string) =>
    Number((await t.db.selectFrom('imports').select((eb) => eb.fn.countAll().as('n')).where('website_id', '=', websiteId).executeTakeFirst())?.n);
  const getImport = async (token: string, websiteId: string, importId: string) => (await t.request('GET', importsUrl(websiteId, importId), { token })).body.data[0];

  it('refuses a file that is not a whole export of a known version with a 400 naming the problem, storing nothing', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    const refuse = async (body: Buffer | string, pattern: RegExp, type = NDJSON) => expectError(await uploadExport(t, owner.token, id, body, type), 400, pattern);
    await refuse('not json\n', /line 1 is not JSON/);
    await refuse(exportFile(records(), { header: { format: 'other-tool' } }), /format must be "sightline-export", not "other-tool"/);
    await refuse(exportFile(records(), { header: { version: 2 } }), /version 2 is newer than this server reads \(up to 1\)/);
    await refuse(exportFile(records(), { header: { version: 'one' } }), /version must be a whole number/);
    await refuse(exportFile(records(), { end: false }), /cut short: its last line is not the end line/);
    await refuse(exportFile(records(), { counts: { website: 1, event: 11, payment: 2 } }), /end line counts 14 records but the file holds 15/);
    await refuse(gzipSync(exportFile(records())).subarray(0, 60), /cannot be read/, 'application/gzip');
    await refuse(Buffer.alloc(0), /body/);
    await refuse('\n', /body/);
    // A cut gzip: the whole gzip is checked before anything is stored.
    const whole = gzipSync(exportFile(records()));
    await refuse(whole.subarray(0, whole.length - 30), /cannot be read|cut short/, 'application/gzip');
    expect(await countImports(id)).toBe(0);
    expect(await t.db.selectFrom('import_uploads').selectAll().where('website_id', '=', id).execute()).toEqual([]);
  });

  it('imports the records in chunks, with the progress and a report of what was read, kept and skipped', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    const file = [
      ...records(),
      pageviewRecord(hex(0xa100), 'v9', 'not a date'),
      { type: 'event', data: { id: hex(0xa101), type: 'teleport', visitor_id: 'v9', occurred_at: '2026-03-10T00:00:00.000Z' } },
      { type: 'hologram', data: {} },
    ];
    // The unknown type is in the end line's counts of a newer writer: counted, not read.
    const text = exportFile(file).replace('"payment":2}', '"payment":2,"hologram":1}');
    // The background worker waits: this test runs the job's first chunk itself.
    await t.app.importJobs!.stop();
    const created = await uploadExport(t, owner.token, id, gzipSync(text), 'application/gzip', 'from the old server');
    expect(created.status, created.raw).toBe(202);
    const importId = created.body.data[0].id;
    expect(created.body.data[0]).toMatchObject({ source: 'sightline-export', label: 'from the old server', status: 'queued', progress: { rowsRead: 0, rowsTotal: 18, percent: 0 } });

    // One chunk, then a stop: the progress shows the lines read, the job keeps its cursor.
    const lease = { owner: 'first', ms: 60_000 };
    const job = await claimNextJob(t.db, SIGHTLINE_IMPORT_JOB, new Date().toISOString(), lease);
    let chunks = 0;
    const context = { db: t.db, store: t.app.eventStore, lease, chunkRows: 5, stopping: () => ++chunks >= 1, events: NO_EVENT_HOOKS };
    expect(await runSightlineImportJob(context, job!)).toBe('stopped');
    await releaseJob(t.db, job!, lease);
    // Read before the worker starts again (it would take the next chunk at once).
    const running = await getImport(owner.token, id, importId);
    expect(running).toMatchObject({ status: 'running', progress: { rowsRead: 5, rowsKept: 5, percent: 27 } });
    t.app.importJobs!.start();

    await runImports(t);
    const done = await getImport(owner.token, id, importId);
    expect(done).toMatchObject({
      status: 'done',
      firstDay: '2026-03-10',
      lastDay: '2026-03-12',
      error: null,
      progress: { rowsRead: 18, rowsKept: 15, rowsSkipped: 3, rowsTotal: 18, percent: 100 },
      report: { skipped: { invalid_record: 2, unknown_type: 1, already_present: 0, settings_kept: 0 }, export: { websiteId: 'exported-site', domain: 'moved.example.com', settings: 'applied' } },
    });
    expect(done.report.files.find((f: { name: string }) => f.name === 'event')).toEqual({ name: 'event', table: 'events', rowsRead: 14, rowsKept: 12, rowsSkipped: 2 });
    expect(await overview(owner.token, id)).toEqual({ visitors: 4, pageviews: 12, revenue: 5000, payments: 1 });
    // A fresh website takes the export's settings.
    expect((await t.request('GET', `/api/v1/admin/websites/${id}`, { token: owner.token })).body.data[0]).toMatchObject({ timezone: 'Asia/Tokyo', currency: 'JPY' });
    // The ids are the export's (free on this installation), and the upload is gone.
    const ids = (await t.storedEvents(id)).map((event) => event.id).sort();
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => hex(0xa000 + i)));
    expect(await t.db.selectFrom('import_uploads').selectAll().where('import_id', '=', importId).execute()).toEqual([]);
  });

  it('changes nothing when the same file comes again (409), and adds only what is new from a later export', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    const first = exportFile(records());
    expect((await uploadExport(t, owner.token, id, first, NDJSON)).status).toBe(202);
    await runImports(t);
    const before = await overview(owner.token, id);
    expectError(await uploadExport(t, owner.token, id, first, NDJSON), 409, /already imported into the website/);
    expectError(await uploadExport(t, owner.token, id, gzipSync(first), 'application/gzip'), 409);

    // A later export of the same website: the same rows and three new ones.
    const later = exportFile([...records(), pageviewRecord(hex(0xa050), 'v7', '2026-03-13T09:00:00.000Z'), pageviewRecord(hex(0xa051), 'v7', '2026-03-13T09:01:00.000Z'), paymentRecord(hex(0xb003), 'tx-3', 'v7', 700, '2026-03-13T09:02:00.000Z')]);
    // As the MCP tool sends it: JSON, the file base64-encoded.
    const second = await uploadExport(t, owner.token, id, JSON.stringify({ zipBase64: gzipSync(later).toString('base64') }), 'application/json');
    expect(second.status, second.raw).toBe(202);
    await runImports(t);
    const report = await getImport(owner.token, id, second.body.data[0].id);
    expect(report).toMatchObject({ status: 'done', progress: { rowsRead: 18, rowsKept: 3, rowsSkipped: 15 }, report: { skipped: { already_present: 14, settings_kept: 1 }, export: { settings: 'kept' } } });
    expect(await overview(owner.token, id)).toEqual({ visitors: before.visitors + 1, pageviews: before.pageviews + 2, revenue: before.revenue + 700, payments: before.payments + 1 });
  });

  it('gives rows whose ids another website holds ids of their own, and keeps the settings of a website with data', async () => {
    const owner = await createAccount(t);
    const first = await createWebsite(t, owner.token);
    const second = await createWebsite(t, owner.token);
    const file = exportFile(records());
    expect((await uploadExport(t, owner.token, first.id, file, NDJSON)).status).toBe(202);
    await runImports(t);
    // The second website has an event of its own: it keeps its zone and currency.
    await writeAndDerive(t, [newEvent(second.id, 'native', { occurredAt: '2026-03-20T12:00:00.000Z' })]);
    const created = await uploadExport(t, owner.token, second.id, file, NDJSON);
    expect(created.status, created.raw).toBe(202);
    await runImports(t);
    expect(await getImport(owner.token, second.id, created.body.data[0].id)).toMatchObject({ status: 'done', progress: { rowsKept: 14, rowsSkipped: 1 }, report: { export: { settings: 'kept' } } });
    expect((await t.request('GET', `/api/v1/admin/websites/${second.id}`, { token: owner.token })).body.data[0]).toMatchObject({ timezone: 'Europe/Paris' });
    const secondIds = (await t.storedEvents(second.id)).filter((e) => e.visitor_id !== 'native').map((e) => e.id).sort();
    expect(secondIds).toEqual(Array.from({ length: 12 }, (_, i) => derivedId(second.id, 'event', hex(0xa000 + i))).sort());
    expect(await overview(owner.token, first.id)).toMatchObject({ visitors: 4, pageviews: 12 });
    expect(await overview(owner.token, second.id)).toMatchObject({ visitors: 5, pageviews: 13 });
  });

  it('deletes an import with every row it brought, leaving the website\'s own', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    await writeAndDerive(t, [newEvent(id, 'native', { occurredAt: '2026-03-20T12:00:00.000Z' })]);
    const created = await uploadExport(t, owner.token, id, exportFile(records()), NDJSON);
    await runImports(t);
    expect(await overview(owner.token, id)).toMatchObject({ visitors: 5, pageviews: 13 });
    const deleted = await t.request('DELETE', importsUrl(id, created.body.data[0].id), { token: owner.token, body: {} });
    expect(deleted.status, deleted.raw).toBe(200);
    expectError(await t.request('GET', importsUrl(id, created.body.data[0].id), { token: owner.token }), 404);
    await runImports(t);
    expect(await overview(owner.token, id)).toEqual({ visitors: 1, pageviews: 1, revenue: 0, payments: 0 });
    expect(await countImports(id)).toBe(0);
    expect(await t.db.selectFrom('import_raw_rows').selectAll().where('import_id', '=', created.body.data[0].id).execute()).toEqual([]);
  });

  it('fails on a damaged line with its number, keeping what it stored until the import is deleted', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    // Line 9 (the header is line 1) is not JSON; the first and last lines are, and the count adds up.
    const lines = exportFile(records()).split('\n');
    lines[8] = '{"type": "event", "data": {"id": "broken';
    const created = await uploadExport(t, owner.token, id, lines.join('\n'), NDJSON);
    expect(created.status, created.raw).toBe(202);
    await runImports(t);
    const failed = await getImport(owner.token, id, created.body.data[0].id);
    expect(failed).toMatchObject({ status: 'failed', error: 'line 9 is not JSON: the file is damaged', progress: { rowsKept: 5 } });
    // The first chunk (the website record and four events) was stored before line 9.
    expect(await overview(owner.token, id)).toMatchObject({ pageviews: 4 });
    expect((await t.request('DELETE', importsUrl(id, failed.id), { token: owner.token, body: {} })).status).toBe(200);
    await runImports(t);
    expect(await overview(owner.token, id)).toMatchObject({ visitors: 0, pageviews: 0 });
  });

  it('answers 401, 403 (permission, role, website scope) and 404 like every website route', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    const file = exportFile(records());
    expectError(await uploadExport(t, 'dft_nope', id, file, NDJSON), 401);
    expectError(await uploadExport(t, await createToken(t, owner, allBut('settings:write')), id, file, NDJSON), 403, /settings:write/);
    const viewer = await createAccount(t);
    await addMember(t, id, viewer.id, 'viewer');
    expectError(await uploadExport(t, viewer.token, id, file, NDJSON), 403, /viewer/);
    const other = await createWebsite(t, owner.token);
    expectError(await uploadExport(t, await createToken(t, owner, ['*'], [other.id]), id, file, NDJSON), 403);
    const stranger = await createAccount(t);
    expectError(await uploadExport(t, stranger.token, id, file, NDJSON), 404);
    expectError(await uploadExport(t, owner.token, UNKNOWN_ID, file, NDJSON), 404);
    // Too large for IMPORT_MAX_UPLOAD_MB: 413, nothing stored.
    const big = exportFile(Array.from({ length: 400 }, (_, i) => pageviewRecord(hex(0xc000 + i), 'v', '2026-03-10T00:00:00.000Z')));
    expect((await uploadExport(t, owner.token, id, big, NDJSON)).status).toBe(413);
    expect(await countImports(id)).toBe(0);
  });
});

describeWithClickHouse('importing Sightline\'s own export with the events in ClickHouse', () => {
  const t: TestApp = useTestApp('clickhouse', { imports: { jobs: true, maxUploadBytes: 64 * 1024, chunkRows: 5 } });
  const overview = async (token: string, websiteId: string) =>
    (await t.request('GET', '/api/v1/analytics/overview', { token, query: { websiteId, startAt: '2026-03-01', endAt: '2026-03-31', fields: 'visitors,pageviews' } })).body.data[0];

  it('ships the events through the relay and skips those ClickHouse holds already when a later export comes', async () => {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    expect((await uploadExport(t, owner.token, id, exportFile(records()), NDJSON)).status).toBe(202);
    await runImports(t);
    expect(await overview(owner.token, id)).toEqual({ visitors: 4, pageviews: 12 });
    const later = exportFile([...records(), pageviewRecord(hex(0xa050), 'v7', '2026-03-13T09:00:00.000Z')]);
    const second = await uploadExport(t, owner.token, id, later, NDJSON);
    expect(second.status, second.raw).toBe(202);
    await runImports(t);
    const item = (await t.request('GET', importsUrl(id, second.body.data[0].id), { token: owner.token })).body.data[0];
    expect(item).toMatchObject({ status: 'done', progress: { rowsKept: 1, rowsSkipped: 15 }, report: { skipped: { already_present: 14, settings_kept: 1 } } });
    expect(await overview(owner.token, id)).toEqual({ visitors: 5, pageviews: 13 });
    expect((await t.storedEvents(id)).length).toBe(13);
  });
});
