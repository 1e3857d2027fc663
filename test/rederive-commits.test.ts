import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { relocateChunk } from '../src/modules/analytics/day-relocation.ts';
import { buildChunk, startBuild } from '../src/modules/analytics/derived-build.ts';
import { paymentsRecorded } from '../src/modules/analytics/maintainer.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { insertPaymentOnce } from '../src/modules/events/server-events.repository.ts';
import { newId } from '../src/lib/ids.ts';
import { useTestApp } from './helpers/app.ts';
import { holdDerivedDataWorker } from './helpers/derived-data-worker.ts';
import { VISITORS, batchClock, eventsOf, expectRebuilt, finish, random, record, startA } from './helpers/derived-sequences.ts';
import { POSTGRES_URL, postgresProblem } from './helpers/engines.ts';
import { newEvent, ownerWithWebsite } from './helpers/factories.ts';
import { hold, within } from './helpers/held-locks.ts';

// Work that folds a website's waiting events in and then derives visitors again from their raw
// events, in one transaction (a time-zone move's chunk, a build's chunk, a goal delete's repair),
// must not also count an event that commits between the two: under PostgreSQL's read committed
// each statement sees what committed before it, and such an event's backlog row still waits, so
// the next fold would count it a second time. (CI saw it: a time series read 279 page views of
// 262, the website's move to its zone running while the test wrote its first batches.) Each test
// holds a row the chunk writes after its fold, commits an event while the chunk waits there, and
// checks that every derived table ends equal to a rebuild. SQLite commits one transaction at a time.

describe.skipIf(Boolean(postgresProblem))(`events committed while a chunk derives${postgresProblem ? ` (skipped: PostgreSQL unreachable at ${POSTGRES_URL})` : ''}`, () => {
  const t = useTestApp('postgres');
  holdDerivedDataWorker(t);

  const zoneOf = async (websiteId: string) => (await t.db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirstOrThrow()).timezone;
  const LATE = batchClock(Date.parse('2026-03-25T00:00:00.000Z'));

  it('a time-zone move holds the website’s inserts while its chunk runs, and the late event counts once', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const next = random(21);
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, next, 3, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const changed = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'Asia/Tokyo' } });
    expect(changed.status, changed.raw).toBe(200);

    // The chunk folds the backlog in, then waits to write its progress on the held row.
    const progress = await hold(t.db, async (trx) => {
      await sql`select 1 from rollup_relocations where website_id = ${website.id} for update`.execute(trx);
    });
    const chunk = t.db.transaction().execute((trx) => relocateChunk(trx, website.id, 100));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const late = record(t, eventsOf(website.id, VISITORS[0]!, next, 2, LATE()));
    const waited = await within(late, 500);
    progress.release();
    await progress.done;
    await chunk;
    await late;

    await finish(t.db, website.id, 100);
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await expectRebuilt(t.db, website.id, 'Asia/Tokyo');
    expect(waited, 'an event of the website waits for the chunk').toBe('waiting');
  });

  it('a build lets events in while its chunk runs, and leaves those it did not fold to the fold', async () => {
    const { website } = await ownerWithWebsite(t);
    const next = random(22);
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, next, 3, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await t.db.transaction().execute((trx) => startBuild(trx, website.id, 'test'));
    // The clear phase, to its end: the next chunk derives.
    for (;;) {
      const result = await t.db.transaction().execute((trx) => buildChunk(trx, website.id, 1000));
      if (result.cleared) break;
    }

    // A waiting event whose backlog row the chunk's fold must delete: held, the chunk waits there.
    await record(t, eventsOf(website.id, 'waiting-visitor', next, 1, LATE()));
    const waitingRow = await hold(t.db, async (trx) => {
      await sql`select 1 from rollup_backlog where website_id = ${website.id} for update`.execute(trx);
    });
    const chunk = t.db.transaction().execute((trx) => buildChunk(trx, website.id, 1000));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Ingestion goes on during a build: this event commits while the chunk waits.
    expect(await within(record(t, eventsOf(website.id, VISITORS[1]!, next, 2, LATE())), 3000)).toBe('done');
    waitingRow.release();
    await waitingRow.done;
    expect((await chunk).finished).toBe(true);

    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await expectRebuilt(t.db, website.id, await zoneOf(website.id));
  });

  it('a goal delete holds the website’s inserts while it repairs, and the late event counts once', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    const next = random(23);
    await record(t, VISITORS.flatMap((visitor) => eventsOf(website.id, visitor, next, 6, startA())));
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    const converted = await t.db.selectFrom('events').select('visitor_id').where('website_id', '=', website.id).where('name', '=', 'upgrade').executeTakeFirstOrThrow();

    // A waiting event whose backlog row the delete's settle must delete: held, the delete waits there.
    await record(t, eventsOf(website.id, 'waiting-visitor', next, 1, LATE()));
    const waitingRow = await hold(t.db, async (trx) => {
      await sql`select 1 from rollup_backlog where website_id = ${website.id} for update`.execute(trx);
    });
    const deleted = t.request('DELETE', '/api/v1/goals', { token: owner.token, query: { websiteId: website.id, name: 'upgrade' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const late = record(t, eventsOf(website.id, converted.visitor_id, next, 3, LATE()));
    const waited = await within(late, 500);
    waitingRow.release();
    await waitingRow.done;
    expect((await deleted).status).toBe(200);
    await late;

    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await expectRebuilt(t.db, website.id, await zoneOf(website.id));
    expect(waited, 'an event of the website waits for the delete').toBe('waiting');
  });

  it('a fold deletes only the backlog rows it took: an event committed meanwhile under a lower number still waits', async () => {
    const { website } = await ownerWithWebsite(t);
    // Sequence numbers are taken at insert: the event's batch takes the lower one, and commits last.
    const event = newEvent(website.id, 'late-committer', { occurredAt: '2026-03-05T10:00:00.000Z' });
    const batch = await hold(t.db, async (trx) => void (await recordEvents(trx, [event], { alertCooldownSeconds: 60, mailEnabled: false })));
    const payment = {
      id: newId(), website_id: website.id, transaction_id: `tx-${newId()}`, amount_minor: 900, currency: 'USD', visitor_id: 'payer',
      email: null, renewal: false, refunded: false, occurred_at: '2026-03-05T11:00:00.000Z', created_at: '2026-03-05T11:00:00.000Z',
    };
    await t.db.transaction().execute(async (trx) => {
      await insertPaymentOnce(trx, payment);
      await paymentsRecorded(trx, website.id, [payment.id]);
    });
    // The fold reads the backlog (the payment's row alone), then waits to count the held payment.
    const paymentRow = await hold(t.db, async (trx) => {
      await sql`select 1 from payments where id = ${payment.id} for update`.execute(trx);
    });
    const fold = t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await new Promise((resolve) => setTimeout(resolve, 200));
    batch.release();
    await batch.done;
    paymentRow.release();
    await paymentRow.done;
    expect(await fold).toBe(1);

    const waiting = await t.db.selectFrom('rollup_backlog').select('event_id').where('website_id', '=', website.id).execute();
    expect(waiting.map((row) => row.event_id)).toEqual([expect.any(String)]);
    await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
    await expectRebuilt(t.db, website.id, await zoneOf(website.id));
  });
});
