import { afterEach, beforeEach, expect } from 'vitest';
import type { TestApp } from './app.ts';

/**
 * Holds the app's background derived-data worker during each test, so a time-zone change's move stays
 * under way until the test runs its chunks (relocateChunk) or settles it; released after.
 */
export function holdDerivedDataWorker(t: TestApp): void {
  beforeEach(async () => {
    // Ready first: readiness starts the worker.
    await t.app.ready();
    await t.app.derivedDataWorker.stop();
  });
  afterEach(() => {
    t.app.derivedDataWorker.start();
  });
}

/**
 * Runs `migrate` (a migration's down and up) with the app's worker stopped, checks that it marked
 * a build of the website (src/db/migrations/derived-builds.ts), with `reason` when given, then
 * runs the build to its end and starts the worker again.
 */
export async function migrateAndBuild(t: TestApp, websiteId: string, reason: string | undefined, migrate: () => Promise<void>): Promise<void> {
  await t.app.ready();
  await t.app.derivedDataWorker.stop();
  try {
    await migrate();
    const mark = await t.db.selectFrom('derived_builds').select(['reason', 'cursor']).where('website_id', '=', websiteId).executeTakeFirst();
    expect(mark, 'the migration marked a build').toBeDefined();
    expect(mark!.cursor, 'and built nothing itself').toBeNull();
    if (reason !== undefined) expect(mark!.reason).toBe(reason);
    await t.app.derivedDataWorker.settle();
    expect(await t.db.selectFrom('derived_builds').select('reason').where('website_id', '=', websiteId).executeTakeFirst()).toBeUndefined();
  } finally {
    t.app.derivedDataWorker.start();
  }
}
