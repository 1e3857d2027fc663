import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type TestEngine, clickhouseProblem } from './helpers/clickhouse.ts';
import { useTestApp } from './helpers/app.ts';
import { POSTGRES_URL, postgresProblem } from './helpers/engines.ts';
import { createAccount } from './helpers/factories.ts';
import { runImports, uploadExport } from './helpers/sightline-import.ts';
import { type VariedWebsite, everyRead, seedVariedWebsite } from './helpers/varied-website.ts';

// Issue 37 item 1, third source: a website exported as NDJSON (GET /api/v1/export/raw) and
// imported into a fresh installation on the other engine answers every read of the website API
// exactly as the exporting one; importing the same file again changes nothing.

const IMPORT_CONFIG = { imports: { jobs: true, maxUploadBytes: 10 * 1024 * 1024, chunkRows: 37 } };

/** A read with its notes' authors left out (see above). */
const withoutAuthors = (read: unknown) => JSON.parse(JSON.stringify(read), (key, value) => (key === 'author' ? undefined : value));

function roundTrip(from: TestEngine, to: TestEngine, gzip: boolean) {
  describe(`${from} -> ${to}${gzip ? ' (gzip)' : ''}`, () => {
    const source = useTestApp(from);
    const target = useTestApp(to, IMPORT_CONFIG);
    const domain = `varied-${from}-${to}.example.com`;
    let seeded: VariedWebsite;
    let exported: Buffer;
    let targetOwner: Awaited<ReturnType<typeof createAccount>>;
    let targetWebsiteId: string;

    it('exports the seeded website and imports it into a fresh website of the other installation', async () => {
      seeded = await seedVariedWebsite(source, domain);
      const response = await source.app.inject({
        method: 'GET',
        url: '/api/v1/export/raw',
        query: { websiteId: seeded.website.id, ...(gzip ? { gzip: 'true' } : {}) },
        headers: { authorization: `Bearer ${seeded.owner.token}` },
      });
      expect(response.statusCode).toBe(200);
      exported = response.rawPayload;
      const lines = (gzip ? gunzipSync(exported) : exported).toString('utf8').trimEnd().split('\n');
      const counts = JSON.parse(lines.at(-1)!).counts as Record<string, number>;
      expect(counts).toMatchObject({ website: 1, funnel: 2, goalCustomization: 1, currencyRate: 2, note: 2, visitorProfile: 5, payment: 12 });
      expect(counts.event).toBeGreaterThan(200);

      targetOwner = await createAccount(target);
      // A fresh website in another zone and currency: it takes the export's.
      const created = await target.request('POST', '/api/v1/admin/websites', { token: targetOwner.token, body: { domain, timezone: 'UTC', name: 'Varied' } });
      expect(created.status, created.raw).toBe(200);
      targetWebsiteId = created.body.data[0].id;
      const upload = await uploadExport(target, targetOwner.token, targetWebsiteId, exported, gzip ? 'application/gzip' : 'application/x-ndjson');
      expect(upload.status, upload.raw).toBe(202);
      expect(upload.body.data[0]).toMatchObject({ source: 'sightline-export', status: 'queued', progress: { percent: 0, rowsTotal: lines.length - 2 } });
      await runImports(target);
      const done = await target.request('GET', `/api/v1/admin/websites/${targetWebsiteId}/imports/${upload.body.data[0].id}`, { token: targetOwner.token });
      const item = done.body.data[0];
      expect(item, done.raw).toMatchObject({ status: 'done', error: null, progress: { percent: 100, rowsRead: lines.length - 2, rowsKept: lines.length - 2, rowsSkipped: 0 } });
      expect(item.report.export).toEqual({ websiteId: seeded.website.id, domain, exportedAt: expect.any(String), settings: 'applied' });
      expect(Object.fromEntries(item.report.files.map((f: { name: string; rowsKept: number }) => [f.name, f.rowsKept]))).toEqual(counts);
      expect(item.firstDay).toBe('2026-03-02');
      const website = (await target.request('GET', `/api/v1/admin/websites/${targetWebsiteId}`, { token: targetOwner.token })).body.data[0];
      expect(website).toMatchObject({ timezone: 'America/New_York', currency: 'EUR', includeRenewalRevenue: true, kpi: 'signup', excludedPaths: ['/admin/*'] });
    });

    it('answers every read of the website API as the exporting installation does', async () => {
      const before = await everyRead(source, seeded.owner.token, seeded.website.id, seeded);
      const after = await everyRead(target, targetOwner.token, targetWebsiteId, seeded);
      expect(Object.keys(after)).toEqual(Object.keys(before));
      // A note's author is an account of the exporting installation: not exported, so the imported notes have none.
      const authors = (read: unknown) => (read as { data: { author: unknown }[] }).data.map((note) => note.author);
      expect(authors(after['admin notes'])).toEqual([null, null]);
      expect(authors(before['admin notes'])).toEqual([expect.objectContaining({ name: 'Test User' }), expect.objectContaining({ name: 'Test User' })]);
      for (const name of Object.keys(before)) expect(withoutAuthors(after[name]), name).toEqual(withoutAuthors(before[name]));
      // Not vacuous: the reads hold the seeded traffic, and each but the inactive funnel's answered.
      expect(Object.entries(before).filter(([, read]) => (read as { httpStatus: number }).httpStatus !== 200).map(([name]) => name)).toEqual([`funnel ${seeded.funnelIds[1]}`]);
      expect((before.overview as any).data[0].visitors).toBe(40);
      expect(((before['timeseries day'] as any).data as unknown[]).length).toBeGreaterThan(10);
    });

    it('refuses the same file again (409) and, once deleted and imported anew, ends with the same reads', async () => {
      const again = await uploadExport(target, targetOwner.token, targetWebsiteId, exported, gzip ? 'application/gzip' : 'application/x-ndjson');
      expect(again.status, again.raw).toBe(409);
      expect(again.body.error.message).toMatch(/already imported/);
      const [item] = (await target.request('GET', `/api/v1/admin/websites/${targetWebsiteId}/imports`, { token: targetOwner.token })).body.data;
      const deleted = await target.request('DELETE', `/api/v1/admin/websites/${targetWebsiteId}/imports/${item.id}`, { token: targetOwner.token, body: {} });
      expect(deleted.status, deleted.raw).toBe(200);
      await runImports(target);
      const emptied = await everyRead(target, targetOwner.token, targetWebsiteId, { funnelIds: [], visitorIds: [] });
      expect((emptied.overview as any).data[0]).toMatchObject({ visitors: 0, pageviews: 0 });
      expect((emptied['admin funnels'] as any).data).toEqual([]);
      expect((emptied['admin notes'] as any).data).toEqual([]);
      expect(await target.db.selectFrom('import_raw_rows').selectAll().execute()).toEqual([]);
      expect(await target.db.selectFrom('payments').selectAll().where('website_id', '=', targetWebsiteId).execute()).toEqual([]);
      expect(await target.db.selectFrom('goal_stats').selectAll().where('website_id', '=', targetWebsiteId).where('completions', '>', 0).execute()).toEqual([]);

      const anew = await uploadExport(target, targetOwner.token, targetWebsiteId, exported, gzip ? 'application/gzip' : 'application/x-ndjson');
      expect(anew.status, anew.raw).toBe(202);
      await runImports(target);
      const before = await everyRead(source, seeded.owner.token, seeded.website.id, seeded);
      const after = await everyRead(target, targetOwner.token, targetWebsiteId, seeded);
      for (const name of Object.keys(before)) expect(withoutAuthors(after[name]), name).toEqual(withoutAuthors(before[name]));
    });
  });
}

describe.skipIf(postgresProblem !== null)(`the raw export's round trip between engines (PostgreSQL at ${POSTGRES_URL})`, () => {
  roundTrip('sqlite', 'postgres', false);
  roundTrip('postgres', 'sqlite', true);
});

describe.skipIf(clickhouseProblem !== null)("the raw export's round trip into ClickHouse", () => {
  roundTrip('sqlite', 'clickhouse', false);
});
