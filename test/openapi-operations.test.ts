import { describe, expect, it } from 'vitest';
import { OPERATION_DOCS } from '../src/http/operations.ts';
import { useTestApp } from './helpers/app.ts';

// The OpenAPI document reads well: every operation has a stable operationId (what generated
// clients name their methods after), a summary, a tag the document describes and a described
// 200 answer; the public ingestion route declares no credential; and GET / leads to the docs
// (a JSON client) or is the dashboard (a browser).

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const VERB_FIRST = /^(list|get|create|update|delete|roll|revoke|reset|invite|remove|accept|connect|disconnect|resync|record|sign|set|end|change|confirm|export)[A-Z][A-Za-z]*$/;

interface Operation {
  key: string;
  operation: any;
}

function operationsOf(doc: any): Operation[] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );
}

describe('OpenAPI operations', () => {
  const t = useTestApp('sqlite');

  async function document() {
    const response = await t.request('GET', '/api/v1/openapi.json');
    expect(response.status, response.raw).toBe(200);
    return response.body;
  }

  it('gives every operation a unique, verb-first camelCase operationId from the central table', async () => {
    const operations = operationsOf(await document());
    expect(operations.length).toBeGreaterThan(45);
    const wrong = operations
      .filter(({ key, operation }) => operation.operationId !== OPERATION_DOCS[key]?.operationId || !VERB_FIRST.test(operation.operationId))
      .map(({ key, operation }) => `${key}: ${operation.operationId}`);
    expect(wrong).toEqual([]);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('holds no table entry for an operation the document does not have', async () => {
    const documented = new Set(operationsOf(await document()).map(({ key }) => key));
    expect(Object.keys(OPERATION_DOCS).filter((key) => !documented.has(key))).toEqual([]);
  });

  it('describes every answer of every operation, and gives each a summary and a described tag', async () => {
    const doc = await document();
    const described = new Set((doc.tags ?? []).filter((tag: any) => tag.description).map((tag: any) => tag.name));
    const wrong: string[] = [];
    for (const { key, operation } of operationsOf(doc)) {
      const ok = (operation.responses?.['200'] ?? operation.responses?.['202'])?.description;
      if (!ok || ok === 'Default Response' || ok !== OPERATION_DOCS[key]?.ok) wrong.push(`${key}: 200 described as ${JSON.stringify(ok)}`);
      if (!operation.summary) wrong.push(`${key}: no summary`);
      if (operation.tags?.length !== 1 || !described.has(operation.tags[0])) wrong.push(`${key}: tags ${JSON.stringify(operation.tags)}`);
    }
    expect(wrong).toEqual([]);
    expect(JSON.stringify(doc), 'an answer described as "Default Response"').not.toContain('Default Response');
    const used = new Set(operationsOf(doc).map(({ operation }) => operation.tags[0]));
    expect([...described].filter((tag) => !used.has(tag)), 'tags no operation uses').toEqual([]);
  });

  it('declares no credential on the public routes, only the session on the dashboard routes, and a token or session everywhere else', async () => {
    const doc = await document();
    expect(doc.security).toEqual([{ bearer: [] }, { session: [] }]);
    const declared = operationsOf(doc).filter(({ operation }) => operation.security !== undefined);
    const publicOnes = declared.filter(({ operation }) => operation.security.length === 0).map(({ key }) => key);
    // The webhook receiver holds no Sightline credential: the provider's signature is its proof.
    expect(publicOnes.filter((key) => !key.includes('/api/v1/dashboard/')).sort()).toEqual(['POST /api/events', 'POST /api/webhooks/{provider}/{websiteId}']);
    const events = declared.find(({ key }) => key === 'POST /api/events')!;
    expect(Object.keys(events.operation.responses)).not.toContain('401');
    const sessionOnly = declared.filter(({ operation }) => JSON.stringify(operation.security) === '[{"session":[]}]').map(({ key }) => key);
    expect(sessionOnly).toContain('GET /api/v1/dashboard/session');
    expect([...publicOnes, ...sessionOnly].length).toBe(declared.length);
    expect(sessionOnly.every((key) => key.includes('/api/v1/dashboard/'))).toBe(true);
  });

  it('answers GET / with the dashboard to a browser, the links to the docs to a JSON client, and serves the docs', async () => {
    const json = await t.request('GET', '/', { headers: { accept: 'application/json' } });
    expect(json.status, json.raw).toBe(200);
    expect(json.body).toEqual({ status: 'success', data: [{ name: 'Sightline', docs: '/docs', openapi: '/api/v1/openapi.json' }] });
    const docs = await t.request('GET', json.body.data[0].docs);
    expect(docs.status).toBe(200);
    expect(docs.raw).toContain('<title>Sightline API documentation</title>');
    const spec = await t.request('GET', json.body.data[0].openapi);
    expect(spec.body.openapi).toBe('3.1.0');

    // The suite's global setup built dist/web, so the dashboard is there.
    const browser = await t.request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.status).toBe(200);
    expect(String(browser.headers['content-type'])).toMatch(/^text\/html/);
    expect(browser.raw).toContain('<div id="app">');
  });

  it('does not log GET / at info', async () => {
    const before = t.logLines.length;
    const response = await t.request('GET', '/');
    expect(response.status).toBe(200);
    const lines = t.logLines.slice(before).map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.level <= 30)).toEqual([]);
    // The same request elsewhere is logged, so the check above can fail.
    await t.request('GET', '/api/v1/admin/account');
    expect(t.logLines.length).toBeGreaterThan(before);
  });
});
