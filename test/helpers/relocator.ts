import { afterEach, beforeEach } from 'vitest';
import type { TestApp } from './app.ts';

/**
 * Holds the app's background relocator during each test, so a time-zone change's move stays
 * under way until the test runs its chunks (relocateChunk) or settles it; released after.
 */
export function holdRelocator(t: TestApp): void {
  beforeEach(async () => {
    // Ready first: readiness starts the relocator.
    await t.app.ready();
    await t.app.relocator.stop();
  });
  afterEach(() => {
    t.app.relocator.start();
  });
}
