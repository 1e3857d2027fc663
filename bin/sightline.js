#!/usr/bin/env node
// The `sightline` command: the compiled JavaScript that scripts/build.mjs writes to dist/ (run by
// `npm ci` through `prepare`, and before packing). Stack traces point at the TypeScript sources.
import { URL, fileURLToPath } from 'node:url';

process.setSourceMapsEnabled(true);

const entry = new URL('../dist/cli/main.js', import.meta.url);
try {
  await import(entry.href);
} catch (error) {
  // A checkout installed with --ignore-scripts has no dist/ yet: say how to get one.
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(fileURLToPath(entry))) {
    process.stderr.write('sightline: the compiled server is missing (dist/); run "npm run build" first\n');
    process.exit(1);
  }
  throw error;
}
