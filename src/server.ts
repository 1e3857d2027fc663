import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { countAccounts } from './modules/account/account.repository.ts';

// Process entry: config -> database (migrated) -> app -> listen, and a graceful close that
// lets in-flight requests finish before the process exits.

/** How long in-flight requests get to finish after SIGTERM (Docker sends SIGKILL at 10 s). */
const DRAIN_DEADLINE_MS = 8_000;
/** After the deadline, how long closing the sockets and the database may take before exit. */
const CLOSE_GRACE_MS = 1_000;

export async function startServer(config: Config): Promise<FastifyInstance> {
  // Each statement waits at most databaseQueryTimeoutMs for PostgreSQL's answer, migrations at
  // start included (`sightline migrate` has no limit, for a migration over a very large table).
  const db = createDatabase(config.databaseUrl, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  const applied = await migrateToLatest(db);
  // The app closes the database itself, as the last of its onClose hooks: a hook added here would
  // run first (they run in reverse order) and destroy it under the stop's rollup derivation.
  const app = await buildApp({ config, db, closeDb: true });
  if (applied.length > 0) app.log.info({ migrations: applied }, 'database migrated');
  const noAccount = (await countAccounts(db.kysely)) === 0;
  await app.listen({ host: config.host, port: config.port });
  if (noAccount) {
    app.log.warn(
      `No account exists yet. Open ${config.publicUrl}/setup in a browser to create the first one, ` +
        'or run: npx sightline admin create-account --email you@example.com --name "Your Name"',
    );
  } else {
    app.log.info(`The dashboard is at ${config.publicUrl}/`);
  }

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    // A client that never finishes its request (a stalled upload, a slow-loris) would hold the
    // drain open forever; a supervisor's SIGKILL then cuts everything. Stop waiting at a deadline
    // inside Docker's and systemd's grace periods, close what is still open, and exit 1.
    let cutShort = false;
    setTimeout(() => {
      cutShort = true;
      app.log.warn({ deadlineMs: DRAIN_DEADLINE_MS }, 'drain deadline passed: closing the connections still open');
      app.server.closeAllConnections();
      setTimeout(() => process.exit(1), CLOSE_GRACE_MS).unref();
    }, DRAIN_DEADLINE_MS).unref();
    app.close().then(
      () => process.exit(cutShort ? 1 : 0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  // Once: a second signal ends the process at once (Ctrl-C twice).
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return app;
}
