#!/usr/bin/env node
// Compiles the TypeScript sources to the JavaScript the package runs (dist/), with esbuild, a
// production dependency: `npm ci --omit=dev` runs this through `prepare` and leaves a working
// server. Plain JavaScript so it runs without a TypeScript loader.
//
//   dist/cli/   the `sightline` command (bin/sightline.js imports dist/cli/main.js); the server,
//               the client and the MCP server are chunks loaded when a command needs them
//   dist/sdk/   the typed client exported as `sightline/sdk` (.d.ts by tsc, when it is installed)
//
// Usage: node scripts/build.mjs [--no-types]
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');

const common = {
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Dependencies stay in node_modules: native modules (better-sqlite3) and packages that read
  // their own files (the Swagger UI assets) work as they do in development.
  packages: 'external',
  sourcemap: 'linked',
  // Stack traces need positions, not the sources (which the package does not ship).
  sourcesContent: false,
  // Function and class names stay readable in logs and stack traces.
  keepNames: true,
  logLevel: 'warning',
  write: false,
  metafile: true,
};

/**
 * A module that reads a file beside its source (`new URL('../../openapi.json', import.meta.url)`)
 * must find it from the bundle too: each source file's `import.meta.url` becomes the URL of that
 * source file, computed from where its bundle lies, so relative paths resolve as in development.
 */
function sourceLocatedImportMeta(outputDirectory) {
  return {
    name: 'source-located-import-meta',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const fromBundle = relative(outputDirectory, args.path).split('\\').join('/');
        const sourceUrl = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
        return { contents: source.replaceAll(/\bimport\.meta\.url\b/g, sourceUrl), loader: 'ts' };
      });
    },
  };
}

/** The command: one entry and its lazily loaded chunks, all in dist/cli so the rewrite above holds. */
function buildCli() {
  const outdir = join(DIST, 'cli');
  return esbuild.build({
    ...common,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir,
    splitting: true,
    chunkNames: '[name]-[hash]',
    plugins: [sourceLocatedImportMeta(outdir)],
  });
}

function buildSdk() {
  return esbuild.build({ ...common, entryPoints: { index: 'sdk/index.ts' }, outdir: join(DIST, 'sdk') });
}

/**
 * Writes each file beside its target, then renames it into place: a process that starts while
 * the build runs (a test, a server under `npm run build`) reads either the old file or the new
 * one, never half of one. Entry files go last, so they never name a chunk not yet written.
 * Chunks of earlier builds that no output names any more are removed.
 */
function writeAtomically(result, outdir) {
  mkdirSync(outdir, { recursive: true });
  const entries = new Set(
    Object.entries(result.metafile.outputs)
      .filter(([, output]) => output.entryPoint)
      .map(([path]) => join(ROOT, path)),
  );
  const isEntry = (file) => Number(entries.has(file.path));
  const files = [...result.outputFiles].sort((a, b) => isEntry(a) - isEntry(b));
  for (const file of files) {
    let current;
    try {
      current = readFileSync(file.path);
    } catch {
      current = undefined;
    }
    if (current && Buffer.compare(current, file.contents) === 0) continue;
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  const written = new Set(result.outputFiles.map((file) => file.path));
  for (const name of readdirSync(outdir)) {
    const path = join(outdir, name);
    if (/\.js(\.map)?$/.test(name) && !written.has(path)) rmSync(path, { force: true });
  }
}

/** The SDK's type declarations, from tsc when it is installed (not under `--omit=dev`). */
function buildSdkTypes() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    // A tarball must never ship without its types: `npm pack` and `npm publish` need tsc.
    if (['pack', 'publish'].includes(process.env.npm_command ?? '')) {
      throw new Error('typescript is not installed: the SDK type declarations cannot be built for the package');
    }
    console.error('build: typescript is not installed (--omit=dev); the SDK type declarations were not built');
    return;
  }
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.sdk.json'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`tsc -p tsconfig.sdk.json failed (exit ${result.status})`);
}

const withTypes = !process.argv.includes('--no-types');
const [cli, sdk] = await Promise.all([buildCli(), buildSdk()]);
writeAtomically(cli, join(DIST, 'cli'));
writeAtomically(sdk, join(DIST, 'sdk'));
if (withTypes) buildSdkTypes();
