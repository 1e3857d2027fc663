import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { type CrashStore, describePostgres, useCrashStores } from './helpers/crash-stores.ts';
import { DERIVED, rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { call } from './helpers/listening-sightline.ts';
import { sleep } from './helpers/processes.ts';
import { type ExportRecord, exportFile, pageviewRecord, paymentRecord, websiteRecord } from './helpers/sightline-export-file.ts';

// An import of Sightline's own export across kill -9: the server is killed while the import's job
// stores chunks, twice, and restarted; the job goes on from its last committed line, and at the end
// every event and payment of the file is stored exactly once, the import's counts are the file's,
// and the derived tables equal a rebuild from the stored raw events.

const EVENTS = 6000;
const PAYMENTS = 40;
const TIMEZONE = 'Asia/Tokyo';
const stores = useCrashStores('ownimport');

const hex = (n: number) => n.toString(16).padStart(24, '0');

function bigExport(): Buffer {
  const records: ExportRecord[] = [websiteRecord({ timezone: TIMEZONE })];
  for (let i = 0; i < EVENTS; i++) {
    const visitor = `cv${i % 211}`;
    const at = new Date(Date.UTC(2026, 1, 1 + (i % 20), (i * 7) % 24, i % 60)).toISOString();
    records.push(
      i % 9 === 4
        ? pageviewRecord(hex(0x10_0000 + i), visitor, at, { type: 'custom', name: 'signup', path: '/signup' })
        : pageviewRecord(hex(0x10_0000 + i), visitor, at, { path: `/p${i % 17}`, session_id: `${visitor}-${i % 20}` }),
    );
  }
  records.sort((a, b) => String(a.data.occurred_at ?? '').localeCompare(String(b.data.occurred_at ?? '')));
  for (let i = 0; i < PAYMENTS; i++) records.push(paymentRecord(hex(0x20_0000 + i), `tx-${i}`, `cv${i}`, 100 * (i + 1), new Date(Date.UTC(2026, 1, 2 + (i % 15))).toISOString()));
  return gzipSync(exportFile(records));
}

async function importAcrossKills(store: CrashStore) {
  const db = store.open();
  await migrateToLatest(db);
  const { token } = await createAccountWithToken(db.kysely, `ownimport-${randomBytes(4).toString('hex')}@example.com`, 'Importer');
  await db.close();
  const node = await stores.server(store, { IMPORT_CHUNK_ROWS: '40', INTEGRATION_JOB_LEASE_SECONDS: '5' });
  await node.start();
  const created = await call(node.baseUrl, 'POST', '/api/v1/admin/websites', { token, body: { domain: `moved-${randomBytes(3).toString('hex')}.example.com`, timezone: 'UTC', name: 'Moved' } });
  expect(created.status).toBe(200);
  const websiteId = created.body.data[0].id as string;
  // A stored funnel before the import's events, so its tables are kept and checked against a rebuild too.
  const funnel = await call(node.baseUrl, 'POST', `/api/v1/admin/websites/${websiteId}/funnels`, {
    token,
    body: { name: 'Imported funnel', steps: [{ type: 'goal', goalName: 'signup' }, { type: 'pageview', url: '/p1' }] },
  });
  expect(funnel.status, JSON.stringify(funnel.body)).toBe(200);
  const upload = await fetch(`${node.baseUrl}/api/v1/admin/websites/${websiteId}/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip' },
    body: new Uint8Array(bigExport()),
  });
  expect(upload.status).toBe(202);
  const importId = ((await upload.json()) as { data: { id: string }[] }).data[0]!.id;
  const progress = async () => (await call(node.baseUrl, 'GET', `/api/v1/admin/websites/${websiteId}/imports/${importId}`, { token })).body.data[0];

  const readAtKill: number[] = [];
  for (const share of [0.2, 0.55]) {
    // Killed once the job has read about this share of the file.
    for (let waited = 0; ; waited += 50) {
      const item = await progress();
      if (item.progress.rowsRead >= share * (EVENTS + PAYMENTS) || item.status === 'done') break;
      expect(waited, 'the import makes progress').toBeLessThan(120_000);
      await sleep(50);
    }
    process.kill(node.process().child.pid!, 'SIGKILL');
    await node.process().exited;
    const check = store.open();
    readAtKill.push((await check.kysely.selectFrom('imports').select('rows_read').where('id', '=', importId).executeTakeFirstOrThrow()).rows_read);
    await check.close();
    await node.start();
  }
  let done;
  for (let waited = 0; ; waited += 200) {
    done = await progress();
    if (done.status === 'done' || done.status === 'failed') break;
    expect(waited, 'the import ends after the restarts').toBeLessThan(180_000);
    await sleep(200);
  }
  const total = EVENTS + PAYMENTS + 1;
  expect(done).toMatchObject({ status: 'done', error: null, progress: { rowsRead: total, rowsKept: total, rowsSkipped: 0, percent: 100 } });
  expect(readAtKill.every((read) => read > 0 && read < total), `lines read at each kill: ${readAtKill.join(', ')}`).toBe(true);
  // A read settles what waits for the rollups; then the server dies once more.
  expect((await call(node.baseUrl, 'GET', `/api/v1/analytics/overview?websiteId=${websiteId}`, { token })).status).toBe(200);
  node.process().killGroup();
  await node.process().exited;

  const check = store.open();
  try {
    const events = await check.kysely.selectFrom('events').select('id').where('website_id', '=', websiteId).execute();
    expect(events.length).toBe(EVENTS);
    expect(new Set(events.map((event) => event.id)).size).toBe(EVENTS);
    const payments = await check.kysely.selectFrom('payments').select('transaction_id').where('website_id', '=', websiteId).execute();
    expect(payments.length).toBe(PAYMENTS);
    expect(await check.kysely.selectFrom('import_raw_rows').select('row_id').where('import_id', '=', importId).where('kind', '=', 'event').execute()).toHaveLength(EVENTS);
    const expected = await rebuilt(check.kysely, websiteId, TIMEZONE);
    for (const table of DERIVED) {
      const actual = await rowsOf(check.kysely, table, websiteId);
      expect(actual.length, table).toBeGreaterThan(0);
      expect(actual, table).toEqual(expected[table]);
    }
    const stats = await check.kysely.selectFrom('goal_stats').selectAll().where('website_id', '=', websiteId).where('goal_name', '=', 'signup').executeTakeFirstOrThrow();
    expect(Number(stats.completions)).toBe(Array.from({ length: EVENTS }, (_, i) => i).filter((i) => i % 9 === 4).length);
  } finally {
    await check.close();
  }
}

describe('the own export\'s import across kill -9 [sqlite]', () => {
  it('goes on from its last chunk and stores every row of the file exactly once', { timeout: 300_000 }, async () => {
    await importAcrossKills(stores.sqlite());
  });
});

describePostgres('the own export\'s import across kill -9 [postgres]', () => {
  it('goes on from its last chunk and stores every row of the file exactly once', { timeout: 300_000 }, async () => {
    await importAcrossKills(await stores.postgres());
  });
});
