#!/usr/bin/env node
// Runs one TypeScript file (a script or the benchmark) the same way the CLI runs.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: run-ts.js <file.ts> [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(file), ...rest];
await import(pathToFileURL(resolve(file)).href);
