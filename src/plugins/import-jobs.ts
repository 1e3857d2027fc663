import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DEFAULT_UMAMI_CHUNK_DAYS, DEFAULT_UMAMI_HOSTS } from '../config.ts';
import { clickHouseEventIds, deleteClickHouseEvents } from '../modules/events/clickhouse-event-log.ts';
import { ImportJobWorker } from '../modules/imports/import-job-worker.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Runs the imports' jobs; null with IMPORT_JOBS=off (another instance runs them). */
    importJobs: ImportJobWorker | null;
  }
}

/** The imports' worker beside the server: started once it is ready, stopped after its chunk when it closes. */
async function importJobs(app: FastifyInstance): Promise<void> {
  if (!app.config.imports.jobs) {
    app.decorate('importJobs', null);
    return;
  }
  const { maxAttempts, retryBaseMs, leaseMs } = app.config.integrationJobs;
  // Imported raw events (Sightline's own export) take ingestion's way: folded by the rollup deriver, or shipped by the ClickHouse relay.
  const events = {
    inClickHouse: app.clickhouse !== null,
    throttle: async () => app.rollups?.throttle(),
    stored: (count: number) => {
      app.rollups?.wake(count);
      app.clickhouse?.relay.wake();
    },
    rebuilding: () => app.derivedDataWorker.wake(),
    presentIds: async (websiteId: string, ids: string[], fromMs: number, toMs: number) =>
      app.clickhouse ? clickHouseEventIds(app.clickhouse.ch, websiteId, ids, fromMs, toMs) : new Set<string>(),
    deleteEvents: async (websiteId: string, ids: string[]) => {
      if (app.clickhouse) await deleteClickHouseEvents(app.clickhouse.ch, app.db.kysely, app.clickhouse.relay, websiteId, ids);
    },
  };
  const { chunkRows, umamiHosts = DEFAULT_UMAMI_HOSTS, umamiChunkDays = DEFAULT_UMAMI_CHUNK_DAYS } = app.config.imports;
  const worker = new ImportJobWorker(
    { db: app.db.kysely, store: app.eventStore, log: app.log, keyring: app.keyring, events },
    { maxAttempts, retryBaseMs, leaseMs, chunkRows, umamiHosts, umamiChunkDays },
  );
  app.decorate('importJobs', worker);
  app.addHook('onReady', async () => worker.start());
  app.addHook('onClose', async () => worker.stop());
}

export default fp(importJobs, { name: 'import-jobs', dependencies: ['database', 'event-store', 'keyring'] });
