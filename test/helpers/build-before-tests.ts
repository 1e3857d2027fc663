import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './processes.ts';

// Vitest globalSetup: compiles the server once before any test runs, so every test that starts
// `sightline` (bin/sightline.js imports dist/) exercises the current sources, never a stale build.
// The SDK's type declarations are left out: no test reads them, and tsc is the slow part.
export default function setup(): void {
  const result = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build.mjs'), '--no-types'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(`scripts/build.mjs failed (exit ${result.status})\n${result.stdout}\n${result.stderr}`);
  }
}
