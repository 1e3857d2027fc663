import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { countAccounts } from './modules/account/account.repository.ts';

// Process entry: config -> database (migrated) -> app -> listen, and a graceful close that
// lets in-flight requests finish before the process exits.

export async function startServer(config: Config): Promise<FastifyInstance> {
  const db = createDatabase(config.databaseUrl);
  const applied = await migrateToLatest(db);
  const app = await buildApp({ config, db });
  app.addHook('onClose', async () => db.close());
  if (applied.length > 0) app.log.info({ migrations: applied }, 'database migrated');
  if ((await countAccounts(db.kysely)) === 0) {
    app.log.warn(
      'No account exists yet. Create one with: npx sightline admin create-account --email you@example.com --name "Your Name"',
    );
  }
  await app.listen({ host: config.host, port: config.port });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return app;
}
