import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH, SDK_TYPES_PATH, renderOpenApiFiles } from '../scripts/generate-openapi.ts';
import { REPO_ROOT } from './helpers/processes.ts';

// The server's route schemas are the source; openapi.json and the SDK types are generated from
// them and committed; the CLI calls the API through the typed SDK (so tsc catches a changed
// shape). These tests fail when a generated file is stale or an operation has no CLI command.

const REGENERATE = 'Run `npm run openapi` and commit openapi.json and sdk/openapi-types.ts.';

/** Where two texts first differ, as "line N: committed ... / generated ...". */
function firstDifference(committed: string, generated: string): string {
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}:\n  committed: ${JSON.stringify(a[at] ?? '<end of file>')}\n  generated: ${JSON.stringify(b[at] ?? '<end of file>')}`;
}

function expectSame(file: string, committed: string, generated: string) {
  if (committed === generated) return;
  expect.fail(`${file} differs from what the route schemas generate, first at ${firstDifference(committed, generated)}\n${REGENERATE}`);
}

describe('generated API description', { timeout: 60_000 }, () => {
  let rendered: Promise<{ json: string; types: string }> | undefined;
  const render = () => (rendered ??= renderOpenApiFiles());

  it('the committed openapi.json is what the route schemas generate', async () => {
    expectSame('openapi.json', readFileSync(OPENAPI_PATH, 'utf8'), (await render()).json);
  });

  it('the committed SDK types (sdk/openapi-types.ts) are what openapi.json generates', async () => {
    expectSame('sdk/openapi-types.ts', readFileSync(SDK_TYPES_PATH, 'utf8'), (await render()).types);
  });

  it('every admin operation and every website API read (GET /analytics/..., /visitors, /export/raw) has a CLI command that calls it through the SDK', async () => {
    const document = JSON.parse((await render()).json) as { paths: Record<string, Record<string, unknown>> };
    const isRead = (path: string) =>
      path.startsWith('/api/v1/analytics/') || path === '/api/v1/visitors' || path.startsWith('/api/v1/visitors/') || path === '/api/v1/export/raw';
    const operations = Object.entries(document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
      .filter((operation) => {
        const [method, path] = operation.split(' ') as [string, string];
        return path.startsWith('/api/v1/admin/') || (method === 'GET' && isRead(path));
      })
      .sort();
    expect(operations.length).toBeGreaterThan(40);
    expect(operations).toEqual(expect.arrayContaining(['GET /api/v1/analytics/overview', 'GET /api/v1/analytics/funnels/{funnelId}', 'GET /api/v1/visitors/{visitorId}']));

    const dir = join(REPO_ROOT, 'src/cli/client');
    const called = new Set<string>();
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      for (const match of source.matchAll(/\.(GET|POST|PUT|PATCH|DELETE)\(\s*'([^']+)'/g)) called.add(`${match[1]} ${match[2]}`);
    }
    const missing = operations.filter((operation) => !called.has(operation));
    expect(missing, 'operations the CLI (src/cli/client) does not cover').toEqual([]);
    const unknown = [...called].filter((operation) => !operations.includes(operation));
    expect(unknown, 'CLI calls to operations the server does not have').toEqual([]);
  });
});
