import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { type Engine, createDatabase } from '../src/db/database.ts';
import { newId } from '../src/lib/ids.ts';
import type { ChunkRunner } from '../src/modules/analytics/derived-chunk.ts';
import { runChunk } from '../src/modules/analytics/derived-chunk.ts';
import { DerivedDataThread } from '../src/modules/analytics/derived-data-thread.ts';
import { DerivedDataWorker } from '../src/modules/analytics/derived-data-worker.ts';
import { funnelStepsChanged } from '../src/modules/analytics/maintainer.ts';
import type { FunnelStepSpec, MoneyRules } from '../src/modules/stats/event-store.ts';
import { funnel, rawFunnel } from '../src/modules/stats/sql/funnel-sql.ts';
import type { StatsScope } from '../src/modules/stats/stats.params.ts';
import { prepareDatabase } from './prepare.ts';
import { benchScratch } from './scratch.ts';
import { loadSyntheticEvents } from './synthetic-events.ts';

// `node bin/run-ts.js bench/funnel-read.ts`: the bench's funnel (/pricing, then the goal signup)
// over the website-API bench's synthetic website (FUNNEL_EVENTS, default 1,000,000 events over 35
// days, America/New_York), read in one process alternately from the raw events (rawFunnel: what
// the read was before the funnel's derived tables, and still is for filters) and as the planner
// answers it now (funnel-crossings.ts), FUNNEL_REPS times each, for the default range (the last 30
// days to a minute from now: its first day cut) and 30 whole days. Only the funnel's tables are
// derived (the other rollups take minutes and the funnel reads none of them): the funnel is
// stored after the seed, as a person creates one on a website with events (maintainer.ts
// funnelStepsChanged), and its own build (funnel-build.ts) runs in the derived-data worker as the
// server runs it on that engine (on a SQLite file in the derived-data thread, chunks of 50 ms; on
// PostgreSQL chunks of 200 ms; FUNNEL_CHUNK_MS sets both): the time from its creation to kept
// is printed, with its chunks' count and durations.

const EVENTS = Number(process.env.FUNNEL_EVENTS || 1_000_000);
const REPS = Number(process.env.FUNNEL_REPS || 15);
const ENGINES = (process.env.FUNNEL_ENGINES || 'sqlite,postgres').split(',') as Engine[];
const ZONE = 'America/New_York';
const STEPS: FunnelStepSpec[] = [{ type: 'pageview', url: '/pricing' }, { type: 'goal', goalName: 'signup' }];
const MONEY: MoneyRules = { currency: 'USD', includeRenewals: true };
const CHUNK_MS = process.env.FUNNEL_CHUNK_MS ? Number(process.env.FUNNEL_CHUNK_MS) : undefined;
const quiet = { info() {}, warn() {}, error() {}, debug() {} } as unknown as FastifyBaseLogger;

const scratch = benchScratch('funnel-read-');
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
try {
  for (const engine of ENGINES) {
    const database = await prepareDatabase(engine, scratch.dir, scratch.onCleanup);
    const db = createDatabase(database.url, database.pgSchema ? { pgSchema: database.pgSchema } : {});
    try {
      const websiteId = newId();
      const now = Date.now();
      const at = new Date(now).toISOString();
      await sql`insert into websites (id, domain, name, tracking_id, timezone, currency, revenue_metric, is_cookieless, include_renewal_revenue,
        allowed_hostnames, excluded_ips, excluded_paths, excluded_countries, excluded_hostnames, created_at, updated_at)
        values (${websiteId}, 'funnel.bench.example.com', 'Funnel', ${newId()}, ${ZONE}, 'USD', 'revenue', ${false}, ${true}, '[]', '[]', '[]', '[]', '[]', ${at}, ${at})`.execute(db.kysely);
      let began = performance.now();
      const counts = await loadSyntheticEvents(engine, database.url, database.pgSchema, { websiteId, events: EVENTS, days: 35, now });
      console.error(`${engine}: ${counts.events} events, ${counts.payments} payments seeded in ${((performance.now() - began) / 1000).toFixed(1)} s`);
      if (engine === 'postgres') await sql`vacuum analyze events, payments`.execute(db.kysely);
      // The funnel created on the website with its events: from its creation to kept.
      const thread = db.writeGate && db.sqlitePath ? new DerivedDataThread(db.sqlitePath, db.writeGate) : null;
      await thread?.start();
      const took: number[] = [];
      const base: ChunkRunner = thread ? thread.run : (request) => runChunk(db.kysely, request);
      const runner: ChunkRunner = async (request) => {
        const outcome = await base(request);
        took.push(outcome.took);
        return outcome;
      };
      const worker = new DerivedDataWorker(db.kysely, quiet, { chunkMs: CHUNK_MS ?? (thread ? 50 : 200), maxVisitors: 5000, runner });
      began = performance.now();
      const steps = STEPS.map((step, i) => ({ id: newId(), name: `s${i}`, ...step }));
      const funnelId = newId();
      await db.kysely.transaction().execute(async (trx) => {
        await trx.insertInto('funnels').values({ id: funnelId, website_id: websiteId, name: 'Signup', slug: 'signup', steps: JSON.stringify(steps), is_active: true, created_at: at, updated_at: at }).execute();
        await funnelStepsChanged(trx, websiteId, [funnelId]);
      });
      const created = performance.now() - began;
      await worker.settle();
      await thread?.stop();
      const keptAfter = performance.now() - began;
      const kept = await db.kysely.selectFrom('funnel_crossings_kept').select('funnel_id').where('funnel_id', '=', funnelId).executeTakeFirst();
      if (!kept) throw new Error(`${engine}: the funnel is not kept after its build`);
      console.log(
        `${engine}: funnel created in ${created.toFixed(1)} ms, kept ${(keptAfter / 1000).toFixed(1)} s after its creation: ${took.length} chunks, ` +
          `chunk p50 ${percentile(took, 50).toFixed(1)} ms, p99 ${percentile(took, 99).toFixed(1)} ms, max ${Math.max(...took).toFixed(1)} ms`,
      );
      if (engine === 'postgres') await sql`vacuum analyze events, payments, funnel_visitor_days, funnel_crossings`.execute(db.kysely);
      const rows = async (table: 'funnel_visitor_days' | 'funnel_crossings') => Number((await db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      console.error(`${engine}: ${await rows('funnel_visitor_days')} visitor-days, ${await rows('funnel_crossings')} sums`);
      // 30 whole local days ending with the latest kept day.
      const { rows: days } = await sql<{ d: string }>`select max(day) as d from funnel_visitor_days`.execute(db.kysely);
      const last = DateTime.fromISO(days[0]!.d, { zone: ZONE });
      const ranges = {
        'default (30 days to now + 1 min)': { from: new Date(now - 30 * 86_400_000).toISOString(), to: new Date(now + 60_000).toISOString() },
        '30 whole days': { from: last.minus({ days: 29 }).toUTC().toISO()!, to: last.plus({ days: 1 }).toUTC().toISO()! },
      };
      for (const [name, range] of Object.entries(ranges)) {
        const scope: StatsScope = { websiteId, range, timezone: ZONE, filters: [], derivedState: 'ready' };
        const times = { raw: [] as number[], tables: [] as number[] };
        let answers = '';
        for (let i = 0; i < REPS; i += 1) {
          let t0 = performance.now();
          const raw = await rawFunnel(db.kysely, scope, STEPS, MONEY);
          times.raw.push(performance.now() - t0);
          t0 = performance.now();
          const kept = await funnel(db.kysely, scope, STEPS, MONEY);
          times.tables.push(performance.now() - t0);
          if (JSON.stringify(raw) !== JSON.stringify(kept)) throw new Error(`${engine} ${name}: ${JSON.stringify(raw)} <> ${JSON.stringify(kept)}`);
          answers = JSON.stringify(kept);
        }
        const show = (values: number[]) => `p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms`;
        console.log(`${engine} ${name} ${JSON.stringify(range)}: raw ${show(times.raw)}; tables ${show(times.tables)}; ${answers}`);
      }
    } finally {
      await db.close();
    }
  }
} finally {
  await scratch.cleanup();
}
