import { randomBytes } from 'node:crypto';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';

// The real Sightline app in its own process, on an already migrated database.
// Input: BENCH_DATABASE_URL, BENCH_PG_SCHEMA (optional), BENCH_CLICKHOUSE_URL (optional: the
// events on ClickHouse), BENCH_LOGGER=off (optional).
// Output: "LISTENING <port>" on stdout.

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is required');
const pgSchema = process.env.BENCH_PG_SCHEMA || undefined;

const NEVER = 1_000_000_000;
const config = loadConfig({}, {
  host: '127.0.0.1',
  port: 0,
  databaseUrl: url,
  // BENCH_LOG_LEVEL=info measures what a production server's default log level costs.
  logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
  secretKey: randomBytes(32).toString('base64'), // required on PostgreSQL; nothing here is encrypted
  rateLimit: { perCredential: NEVER, perAddress: NEVER, perPublicAddress: NEVER, windowMs: 60_000 },
  clickhouseUrl: process.env.BENCH_CLICKHOUSE_URL || undefined,
});

const db = createDatabase(url, pgSchema ? { pgSchema } : {});
const app = await buildApp({ config, db, ...(process.env.BENCH_LOGGER === 'off' ? { logger: false } : {}) });
await app.listen({ host: config.host, port: config.port });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error('no TCP address');
console.log(`LISTENING ${address.port}`);

const shutdown = () => {
  app
    .close()
    .then(() => db.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
