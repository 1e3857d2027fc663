import { afterEach, beforeEach } from 'vitest';
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
