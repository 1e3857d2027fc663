import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { createDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';

/** The OpenAPI document as the route schemas generate it, with a fixed server URL so it is stable. */
export async function generateOpenApiDocument(): Promise<unknown> {
  const db = createDatabase('sqlite::memory:');
  await migrateToLatest(db);
  const config = loadConfig({}, { publicUrl: 'http://127.0.0.1:3000', databaseUrl: 'sqlite::memory:' });
  const app = await buildApp({ config, db, logger: false });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await db.close();
  }
}
