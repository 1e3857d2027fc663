import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
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
}

export default fp(database, { name: 'database' });
