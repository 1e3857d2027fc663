#!/usr/bin/env node
// Compiles the TypeScript sources to the JavaScript the package runs (dist/), with esbuild, a
// production dependency: `npm ci --omit=dev` runs this through `prepare` and leaves a working
// server. Plain JavaScript so it runs without a TypeScript loader.
//
//   dist/cli/   the `sightline` command (bin/sightline.js imports dist/cli/main.js); the server,
//               the client and the MCP server are chunks loaded when a command needs them; the
//               derived-data thread's entry (derived-data-thread-main.js) shares those chunks
//   dist/sdk/   the typed client exported as `sightline/sdk` (.d.ts by tsc, when it is installed)
//   dist/web/   the dashboard: index.html and assets/ (content-hashed JavaScript and CSS, each with
//               its .gz and .br beside it), served by src/plugins/dashboard-pages.ts
//
// Usage: node scripts/build.mjs [--no-types]
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
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

/**
 * The command: one entry and its lazily loaded chunks, all in dist/cli so the rewrite above holds,
 * and the derived-data thread's entry, which src/modules/analytics/derived-data-thread.ts finds
 * beside its own chunk.
 */
function buildCli() {
  const outdir = join(DIST, 'cli');
  return esbuild.build({
    ...common,
    entryPoints: { main: 'src/cli/main.ts', 'derived-data-thread-main': 'src/modules/analytics/derived-data-thread-main.ts' },
    outdir,
    splitting: true,
    chunkNames: '[name]-[hash]',
    plugins: [sourceLocatedImportMeta(outdir)],
  });
}

function buildSdk() {
  return esbuild.build({ ...common, entryPoints: { index: 'sdk/index.ts' }, outdir: join(DIST, 'sdk') });
}

const WEB = join(DIST, 'web');
const WEB_ASSETS = join(WEB, 'assets');
/** The most compressed JavaScript the analytics page may load (the entry, its chunks, the page's). */
const ANALYTICS_BUDGET_BYTES = 150 * 1024;

/**
 * The dashboard for browsers: one entry (web/src/main.tsx) whose pages are lazily imported chunks
 * (the analytics page with uPlot, the settings, the account), every name content-hashed. The CSS
 * of every chunk is bundled into the entry's one CSS file, which index.html links.
 */
function buildWeb() {
  return esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'web/src/main.tsx' },
    outdir: WEB_ASSETS,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    splitting: true,
    minify: true,
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
    metafile: true,
  });
}

/** Each asset's gzip and brotli forms, so the server sends them without compressing per request. */
function precompressed(outputFiles) {
  return outputFiles.flatMap((file) => [
    { path: `${file.path}.gz`, contents: gzipSync(file.contents, { level: 9 }) },
    {
      path: `${file.path}.br`,
      contents: brotliCompressSync(file.contents, {
        params: {
          [zlibConstants.BROTLI_PARAM_QUALITY]: 11,
          [zlibConstants.BROTLI_PARAM_SIZE_HINT]: file.contents.length,
        },
      }),
    },
  ]);
}

const assetUrl = (path) => `/assets/${relative(WEB_ASSETS, join(ROOT, path)).split('\\').join('/')}`;

/** The output files a chunk loads before it runs (its static imports, transitively), itself included. */
function staticClosure(outputs, path, seen = new Set()) {
  if (seen.has(path)) return seen;
  seen.add(path);
  for (const imported of outputs[path]?.imports ?? []) {
    if (imported.kind === 'import-statement' && !imported.external) staticClosure(outputs, imported.path, seen);
  }
  return seen;
}

/** index.html: the hashed entry and its CSS, and the chunks the entry imports preloaded beside it. */
function indexHtml(result) {
  const outputs = result.metafile.outputs;
  const [entry, output] = Object.entries(outputs).find(([, out]) => out.entryPoint === 'web/src/main.tsx') ?? [];
  if (!entry) throw new Error('build: the dashboard bundle has no entry for web/src/main.tsx');
  const preloads = [...staticClosure(outputs, entry)].filter((path) => path !== entry);
  const lines = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light">',
    '<meta name="referrer" content="same-origin">',
    '<title>Sightline</title>',
    '<link rel="icon" href="data:,">',
    ...(output.cssBundle ? [`<link rel="stylesheet" href="${assetUrl(output.cssBundle)}">`] : []),
    ...preloads.map((path) => `<link rel="modulepreload" href="${assetUrl(path)}">`),
    `<script type="module" src="${assetUrl(entry)}"></script>`,
    '</head>',
    '<body>',
    '<noscript>The Sightline dashboard needs JavaScript: enable it for this site, or use the API (/docs).</noscript>',
    '<div id="app"></div>',
    '</body>',
    '</html>',
    '',
  ];
  return lines.join('\n');
}

/** Warns (on stderr; the build still succeeds) when the analytics page outgrows its budget. */
function checkWebBudget(result) {
  const outputs = result.metafile.outputs;
  const find = (source) => Object.keys(outputs).find((path) => outputs[path].entryPoint === source);
  const entry = find('web/src/main.tsx');
  const analytics = find('web/src/analytics/AnalyticsPage.tsx');
  if (!entry || !analytics) return;
  const files = new Map(result.outputFiles.map((file) => [file.path, file.contents]));
  const loaded = new Set([...staticClosure(outputs, entry), ...staticClosure(outputs, analytics)]);
  let total = 0;
  for (const path of loaded) {
    if (path.endsWith('.js')) total += gzipSync(files.get(join(ROOT, path)) ?? Buffer.alloc(0), { level: 9 }).length;
  }
  if (total > ANALYTICS_BUDGET_BYTES) {
    console.error(`build: the analytics page loads ${(total / 1024).toFixed(1)} KB of gzipped JavaScript, over its ${ANALYTICS_BUDGET_BYTES / 1024} KB budget`);
  }
}

/**
 * Writes each file beside its target, then renames it into place: a process that starts while
 * the build runs (a test, a server under `npm run build`) reads either the old file or the new
 * one, never half of one. Entry files go last, so they never name a chunk not yet written.
 * Chunks of earlier builds that no output names any more are removed.
 */
function writeAtomically(result, outdir, { extraFiles = [], stale = /\.js(\.map)?$/ } = {}) {
  mkdirSync(outdir, { recursive: true });
  const entries = new Set(
    Object.entries(result.metafile.outputs)
      .filter(([, output]) => output.entryPoint)
      .map(([path]) => join(ROOT, path)),
  );
  const isEntry = (file) => Number(entries.has(file.path));
  const files = [...result.outputFiles, ...extraFiles].sort((a, b) => isEntry(a) - isEntry(b));
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
  const written = new Set(files.map((file) => file.path));
  for (const name of readdirSync(outdir)) {
    const path = join(outdir, name);
    if (stale.test(name) && !written.has(path)) rmSync(path, { force: true });
  }
}

/** The dashboard's assets first, then the index.html that names them, each written atomically. */
function writeWeb(result) {
  writeAtomically(result, WEB_ASSETS, { extraFiles: precompressed(result.outputFiles), stale: /\.(js|css)(\.map|\.gz|\.br)?$/ });
  const html = Buffer.from(indexHtml(result));
  const target = join(WEB, 'index.html');
  let current;
  try {
    current = readFileSync(target);
  } catch {
    current = undefined;
  }
  if (current && Buffer.compare(current, html) === 0) return;
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, html);
  renameSync(temporary, target);
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
const [cli, sdk, web] = await Promise.all([buildCli(), buildSdk(), buildWeb()]);
writeAtomically(cli, join(DIST, 'cli'));
writeAtomically(sdk, join(DIST, 'sdk'));
writeWeb(web);
checkWebBudget(web);
if (withTypes) buildSdkTypes();
