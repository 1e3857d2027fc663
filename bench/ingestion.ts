import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../src/db/database.ts';
import { createDatabase } from '../src/db/database.ts';
import { startChild } from './children.ts';
import { type LoadResult, load } from './load.ts';
import type { BenchDatabase } from './prepare.ts';
import { CHROME, browserEvent } from './browser-event.ts';
import { type ShapedRequest, returningVisitorTraffic } from './visitor-traffic.ts';

// Ingestion: POST /api/events as the datafast browser SDK sends it (a pageview of a fresh visitor
// on each request, over 20 pages), against a bare node:http server that reads and parses the same
// JSON body and answers the bytes Sightline answered. One request is one event, so req/s is
// events/s. Issue 11 measures it with 32 connections (BENCH_INGEST_CONNECTIONS, default 32).

export const INGEST_PATH = '/api/events';

/** Who sends the events: a fresh visitor per request, or returning visitors with sessions of several pages (visitor-traffic.ts). */
export type IngestionShape = 'fresh' | 'returning';

export interface IngestionResult {
  engine: string;
  shape: IngestionShape;
  path: string;
  sightline: LoadResult;
  bare: LoadResult;
  /** Sightline events/s divided by bare requests/s. */
  ratio: number;
  /** Events found in the database after the run (every answered request must have stored one). */
  stored: number;
  /** Events still waiting for their rollups (rollup_backlog) when the load ended. */
  waitingAtEnd: number;
  /** How long the graceful stop after the load took, deriving those. */
  drainSeconds: number;
  /**
   * Events/s over the load and the drain after it (what the server sustains with its rollups
   * derived), divided by bare requests/s: the ratio the target is judged on.
   */
  sustainedRatio: number;
}

export interface IngestionOptions {
  shape: IngestionShape;
  tempDir: string;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  nodeArgs: string[];
  call: (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<{ bytes: Buffer; contentType: string }>;
}

/** Each request's body and headers, in the shape asked for. */
function eventRequests(website: { trackingId: string; domain: string }, shape: IngestionShape): () => ShapedRequest {
  if (shape === 'returning') return returningVisitorTraffic(website);
  const body = eventBodies(website);
  return () => ({ body: body(), headers: {} });
}

function eventBodies(website: { trackingId: string; domain: string }) {
  let sequence = 0;
  return () => {
    const visitor = `${process.pid}-${sequence++}`;
    return browserEvent(website, {
      visitorId: `bench-visitor-${visitor}`,
      sessionId: `bench-session-${visitor}`,
      visitorFirstSeenAt: '2026-01-01T00:00:00.000Z',
      visitorSessionNumber: 1,
      href: `https://${website.domain}/page-${sequence % 20}?utm_source=bench`,
      referrer: 'https://news.example.org/item?id=1',
      userAgent: CHROME,
    });
  };
}

/** Rows of one website in `table`, counted straight in the database. */
export async function countRows(database: BenchDatabase, table: 'events' | 'rollup_backlog', websiteId: string): Promise<number> {
  const db = createDatabase(database.url, database.pgSchema ? { pgSchema: database.pgSchema } : {});
  try {
    const row = await db.kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  } finally {
    await db.close();
  }
}

export async function benchIngestion(engine: Engine, database: BenchDatabase, options: IngestionOptions): Promise<IngestionResult> {
  const auth = { authorization: `Bearer ${database.token}` };
  const headers = { 'content-type': 'application/json', 'user-agent': CHROME };
  const loadOptions = { headers, seconds: options.seconds, warmupSeconds: options.warmupSeconds, connections: options.connections };
  const serverEnv: Record<string, string> = { BENCH_DATABASE_URL: database.url, ...(database.pgSchema ? { BENCH_PG_SCHEMA: database.pgSchema } : {}) };

  const sightline = await startChild('bench/sightline-server.ts', serverEnv, options.nodeArgs);
  let captured: { bytes: Buffer; contentType: string };
  let websiteId: string;
  let sightlineResult: LoadResult;
  let waitingAtEnd = 0;
  let drainSeconds = 0;
  let website: { id: string; trackingId: string; domain: string };
  try {
    const base = `http://127.0.0.1:${sightline.port}`;
    const created = await options.call('POST', `${base}/api/v1/admin/websites`, auth, { domain: `${options.shape}.ingest.bench.example.com`, timezone: 'Europe/Paris' });
    website = (JSON.parse(created.bytes.toString()) as { data: { id: string; trackingId: string; domain: string }[] }).data[0]!;
    websiteId = website.id;
    const probe = await fetch(`${base}${INGEST_PATH}`, { method: 'POST', headers, body: eventBodies(website)() });
    captured = { bytes: Buffer.from(await probe.arrayBuffer()), contentType: probe.headers.get('content-type') ?? '' };
    const dropped = probe.headers.get('x-sightline-dropped');
    if (probe.status !== 200 || dropped || !captured.bytes.toString().includes('eventId')) {
      throw new Error(`POST ${INGEST_PATH} did not store the event (${probe.status}, dropped: ${dropped}): ${captured.bytes}`);
    }
    console.error(`${engine}: loading Sightline ingestion on port ${sightline.port}`);
    sightlineResult = await load({ url: `${base}${INGEST_PATH}`, serverPid: sightline.child.pid, request: eventRequests(website, options.shape), ...loadOptions });
  } finally {
    // Counted before the stop, which derives them (a graceful stop leaves no backlog).
    waitingAtEnd = await countRows(database, 'rollup_backlog', website!.id).catch(() => 0);
    const stopping = performance.now();
    await sightline.stop();
    drainSeconds = (performance.now() - stopping) / 1000;
  }
  const stored = await countRows(database, 'events', websiteId);

  const bodyFile = join(options.tempDir, `${engine}-ingest-body`);
  writeFileSync(bodyFile, captured.bytes);
  const bare = await startChild('bench/bare-server.ts', { BENCH_BODY_FILE: bodyFile, BENCH_CONTENT_TYPE: captured.contentType, BENCH_READ_BODY: 'json' });
  let bareResult: LoadResult;
  try {
    const url = `http://127.0.0.1:${bare.port}${INGEST_PATH}`;
    const echoed = await fetch(url, { method: 'POST', headers, body: eventBodies(website)() });
    if (!Buffer.from(await echoed.arrayBuffer()).equals(captured.bytes)) throw new Error('the bare server does not answer the bytes Sightline answered');
    console.error(`${engine}: loading bare node:http (POST) on port ${bare.port}`);
    bareResult = await load({ url, serverPid: bare.child.pid, request: eventRequests(website, options.shape), ...loadOptions });
  } finally {
    await bare.stop();
  }
  const sustained = (sightlineResult.reqPerSec * options.seconds) / (options.seconds + drainSeconds);
  return {
    engine,
    shape: options.shape,
    path: INGEST_PATH,
    sightline: sightlineResult,
    bare: bareResult,
    ratio: sightlineResult.reqPerSec / bareResult.reqPerSec,
    stored,
    waitingAtEnd,
    drainSeconds,
    sustainedRatio: sustained / bareResult.reqPerSec,
  };
}
