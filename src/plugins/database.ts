import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sql } from 'kysely';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    config: Config;
  }
}

async function database(app: FastifyInstance, options: { db: Db; config: Config; ownsDb: boolean }) {
  app.decorate('db', options.db);
  app.decorate('config', options.config);
  // Registered first, so it runs last: onClose hooks run in reverse order, and the ones after this
  // (the background tasks, the rollups' last derivation, the ClickHouse relay) still use the database.
  if (options.ownsDb) app.addHook('onClose', async () => options.db.close());
  // On a SQLite file the analytics reads run in worker threads: started before the server listens,
  // so the first reads do not wait for them to load (issue 38). A failure is the reads' to report.
  if (options.db.readWorkers > 0) {
    app.addHook('onReady', async () => {
      await sql`select 1`.execute(options.db.reads).catch((error: Error) => app.log.warn({ err: error }, 'the SQLite read workers did not start; the first read starts them again'));
    });
  }
}

export default fp(database, { name: 'database' });
