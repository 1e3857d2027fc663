import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { describeFault } from '../db/faults.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    config: Config;
  }
}

async function database(app: FastifyInstance, options: { db: Db; config: Config; ownsDb: boolean }) {
  app.decorate('db', options.db);
  app.decorate('config', options.config);
  // A pooled connection that dies while idle (a restart, a failover, a pooler timeout) is replaced
  // on demand; say so once, as a warning.
  const log = app.log.child({ component: 'database' });
  options.db.onConnectionLost((error) => log.warn({ fault: describeFault(error) }, 'database connection lost; reconnecting on demand'));
  if (options.ownsDb) app.addHook('onClose', async () => options.db.close());
}

export default fp(database, { name: 'database' });
