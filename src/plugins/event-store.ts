import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { type ClickHouse, openClickHouse } from '../db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../db/clickhouse/clickhouse-schema.ts';
import { describeFault } from '../db/faults.ts';
import { waitAtMost } from '../lib/read-start.ts';
import { DerivedDataThread } from '../modules/analytics/derived-data-thread.ts';
import { DerivedDataWorker } from '../modules/analytics/derived-data-worker.ts';
import { RollupDeriver } from '../modules/analytics/rollup-backlog.ts';
import { clickhouseEventLog } from '../modules/events/clickhouse-event-log.ts';
import { ClickHouseRelay } from '../modules/events/clickhouse-relay.ts';
import { type EventLog, sqlEventLog } from '../modules/events/event-log.ts';
import type { EventStore } from '../modules/stats/event-store.ts';
import { clickhouseEventStore } from '../modules/stats/clickhouse/clickhouse-event-store.ts';
import { sqlEventStore } from '../modules/stats/sql/sql-event-store.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the website API reads events: the relational database, or ClickHouse. */
    eventStore: EventStore;
    /** The other questions and deletes on the raw events, wherever they live. */
    eventLog: EventLog;
    /** With CLICKHOUSE_URL: the connection and the relay that ships accepted events to it. */
    clickhouse: { ch: ClickHouse; relay: ClickHouseRelay } | null;
    /** Events in the relational database: derives their rollups after the answer (rollup-backlog.ts). */
    rollups: RollupDeriver | null;
    /** Builds websites' derived tables (derived-build.ts) and moves their day rollups to a new time zone (day-relocation.ts), in the background. */
    derivedDataWorker: DerivedDataWorker;
  }
}

/** The event store of the configuration; with ClickHouse, its relay runs beside the server. */
async function eventStore(app: FastifyInstance): Promise<void> {
  // Both stores: with ClickHouse the relational day rollups hold nothing, and its moves end at the first chunk.
  // Chunk lengths by what a chunk holds (derived-data-worker.ts): on a SQLite file the write gate
  // (the chunk runs in the derived-data thread), in memory the event loop, on PostgreSQL the
  // website's derived-data lock.
  const gate = app.db.writeGate;
  const thread = gate && app.db.sqlitePath ? new DerivedDataThread(app.db.sqlitePath, gate) : null;
  const onLoop = app.db.engine === 'sqlite' && !thread;
  const chunkMs = app.config.rebuildChunkMs ?? (thread ? 50 : onLoop ? 8 : 200);
  const worker = new DerivedDataWorker(app.db.kysely, app.log, {
    chunkMs,
    pauseMs: onLoop ? 2 : 0,
    maxVisitors: app.config.rebuildChunkMaxVisitors,
    ...(thread ? { runner: thread.run } : {}),
  });
  app.decorate('derivedDataWorker', worker);
  app.addHook('onReady', async () => {
    // Loaded before the server listens, so the first writes never wait for the thread to start (issue 38).
    await thread?.start().catch((error: Error) => app.log.warn({ err: error }, 'the derived-data thread did not start; its next job starts it again'));
    return worker.start();
  });
  // onClose hooks run last registered first: the rollups' final fold below runs before the thread stops.
  app.addHook('onClose', async () => {
    await worker.stop();
    await thread?.stop();
  });
  const url = app.config.clickhouseUrl;
  if (url === undefined) {
    // On a SQLite file the fold runs in the derived-data thread, beside the requests (issue 39).
    const rollups = thread ? new RollupDeriver(app.db.kysely, app.log, undefined, thread.deriveBacklog) : new RollupDeriver(app.db.kysely, app.log);
    app.events.onCommitted((recorded) => rollups.wake(recorded.length));
    app.events.throttleWith(() => rollups.throttle());
    // Every read first derives the website's waiting events, so a client reads its own events,
    // waiting for that at most analyticsSettleWaitMs (src/plugins/analytics-reads.ts).
    app.decorate('eventStore', sqlEventStore(app.db.reads, (websiteId) => waitAtMost(rollups.settle(websiteId), app.config.analyticsSettleWaitMs)));
    app.decorate('eventLog', sqlEventLog(app.db.kysely));
    app.decorate('clickhouse', null);
    app.decorate('rollups', rollups);
    app.addHook('onReady', async () => rollups.start());
    // After the event writer's last commit (preClose): derive what waits, so a stopped server leaves no backlog.
    app.addHook('onClose', async () => {
      await rollups
        .stop()
        .catch((error: unknown) => app.log.warn({ fault: describeFault(error) }, 'rollups: left events waiting at stop; the next start derives them'));
    });
    return;
  }
  const ch = openClickHouse(url, migrateClickHouse);
  const relay = new ClickHouseRelay(app.db.kysely, ch, app.log);
  app.events.onCommitted(() => relay.wake());
  app.decorate('eventStore', clickhouseEventStore(ch, app.db.reads, () => waitAtMost(relay.settle(), app.config.analyticsSettleWaitMs), { sampleThreshold: app.config.clickhouseSampleThreshold }));
  app.decorate('eventLog', clickhouseEventLog(ch, app.db.kysely, relay));
  app.decorate('clickhouse', { ch, relay });
  app.decorate('rollups', null);
  app.addHook('onReady', async () => relay.start());
  // After the event writer's last commit (preClose), ship what is left, then let go.
  app.addHook('onClose', async () => {
    await relay.settle().catch(() => {});
    await relay.stop();
    await ch.close();
  });
}

export default fp(eventStore, { name: 'event-store', dependencies: ['database', 'event-writer'] });
