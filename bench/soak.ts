import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Engine } from '../src/db/database.ts';
import { call, firstRow } from './call.ts';
import { startChild } from './children.ts';
import { countRows } from './ingestion.ts';
import { type BenchDatabase, postgresProblem, prepareDatabase } from './prepare.ts';
import { benchScratch } from './scratch.ts';
import { Handoff, MIX, type SoakContext } from './soak-mix.ts';
import { type ServerReading, scrape } from './soak-metrics.ts';
import { type Latencies, type RouteWindow, SOAK_TARGETS, type SoakResult, type WindowResult, printMix, printSummary, printWindow, writeSoak } from './soak-report.ts';
import { REQUEST_TIMEOUT_MS, exchange, openLoop, spreadDeck } from './soak-schedule.ts';
import { Audience } from './soak-traffic.ts';
import { SERIES_TIMEZONE, seedSyntheticTraffic } from './timeseries.ts';
import { percentile } from './website-api.ts';

// `npm run soak` (issue 38, "Steady under load"): the real server in a child process on loopback,
// loaded open-loop at SOAK_RATE requests/s (default 150) of the mix in bench/soak-mix.ts for
// SOAK_SECONDS (default 3600), on each of SOAK_ENGINES (default "sqlite,postgres", one after the
// other; PostgreSQL in a schema of its own, dropped after). The website starts with
// SOAK_SEED_EVENTS synthetic events (default 100000, over 35 days) and grows throughout. Every
// 10-s window prints each operation's p50/p99/max and failures, the server's event-loop delay,
// RSS and heap (from its /metrics); the end prints the issue's targets, MET or MISSED, and the
// raw windows go to SOAK_OUT (default ./soak-{engine}-{timestamp}.json). SOAK_CPU_PROF=1 profiles
// the server. SOAK_TRACE=file.ndjson writes every request (its due time from the start, operation,
// latency, failure) to the file ({engine} replaced), to see when a stall began. Ctrl-C ends the run early with its summary; a second Ctrl-C stops at once.

const WINDOW_SECONDS = 10;

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a number > 0, got "${raw}"`);
  return value;
}

const rate = setting('SOAK_RATE', 150);
const seconds = setting('SOAK_SECONDS', 3600);
if (!Number.isInteger(seconds / WINDOW_SECONDS)) throw new Error(`SOAK_SECONDS must be a multiple of ${WINDOW_SECONDS}, got ${seconds}`);
const seedEvents = process.env.SOAK_SEED_EVENTS === '0' ? 0 : setting('SOAK_SEED_EVENTS', 100_000);
const engines = (process.env.SOAK_ENGINES || 'sqlite,postgres').split(',').map((name) => name.trim());
for (const engine of engines) if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`SOAK_ENGINES: unknown engine "${engine}"`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
// SOAK_CPU_PROF=1: a .cpuprofile of each server into bench/results/profiles/ (what held its loop).
// SOAK_NODE_ARGS: more of node's flags for the server (space-separated), to compare V8 settings.
const nodeArgs = [
  ...(process.env.SOAK_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${resolve('bench/results/profiles')}`] : []),
  ...(process.env.SOAK_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
];

/** SOAK_OUT with {engine} replaced; without it and with two engines, the engine goes before the extension. */
function outFile(engine: Engine): string {
  const template = process.env.SOAK_OUT || `./soak-{engine}-${stamp}.json`;
  if (template.includes('{engine}')) return resolve(template.replaceAll('{engine}', engine));
  return resolve(engines.length > 1 ? template.replace(/(\.json)?$/, `-${engine}$1`) : template);
}

interface TracedRequest {
  atMs: number;
  operation: string;
  latencyMs: number;
  outcome?: string;
}

/** Every request of the run, in the order sent (SOAK_TRACE). */
function writeTrace(engine: Engine, trace: TracedRequest[]): void {
  const file = resolve(process.env.SOAK_TRACE!.replaceAll('{engine}', engine));
  trace.sort((a, b) => a.atMs - b.atMs);
  writeFileSync(file, trace.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
  console.error(`${engine}: every request's timing written to ${file}`);
}

function commandLine(): string {
  const env = Object.keys(process.env)
    .filter((name) => name.startsWith('SOAK_'))
    .map((name) => `${name}=${process.env[name]}`);
  return [...env, process.env.npm_lifecycle_event === 'soak' ? 'npm run soak' : 'node bin/run-ts.js bench/soak.ts'].join(' ');
}

const scratch = benchScratch('sightline-soak-');
const { dir: tempDir, cleanup } = scratch;
let stopRequested = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!stopRequested) {
      stopRequested = true;
      console.error(`\n${signal}: ending the run after the current window's answers (again to stop at once)`);
      return;
    }
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

function latencies(values: number[]): Latencies {
  const sorted = values.sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted.at(-1) ?? 0 };
}

/** What one window collects while its requests are answered. */
class WindowTally {
  readonly latencies: number[][] = MIX.map(() => []);
  readonly failures: Record<string, number>[] = MIX.map(() => ({}));
  readonly lags: number[] = [];
  /** The website API's reads answered 2xx, and how many were not. */
  readonly reads: number[] = [];
  readsFailed = 0;
  sent = 0;
  unsettled = 0;
  closed = false;
  server: ServerReading | null = null;
  serverError: string | undefined;
  client = { cpuPercent: 0, loopDelayP99Ms: 0 };
  toSeconds: number;

  constructor(readonly index: number) {
    this.toSeconds = (index + 1) * WINDOW_SECONDS;
  }

  result(): WindowResult {
    const routes: RouteWindow[] = MIX.map((operation, i) => ({
      name: operation.name,
      route: operation.route,
      group: operation.group,
      failures: this.failures[i]!,
      ...latencies(this.latencies[i]!),
    }));
    const lag = latencies(this.lags);
    return {
      index: this.index,
      fromSeconds: this.index * WINDOW_SECONDS,
      toSeconds: this.toSeconds,
      sent: this.sent,
      sendLagMs: { p50: lag.p50Ms, p99: lag.p99Ms, max: lag.maxMs },
      client: this.client,
      server: this.server,
      ...(this.serverError ? { serverError: this.serverError } : {}),
      routes,
      reads: { ...latencies(this.reads), failed: this.readsFailed },
    };
  }
}

/**
 * The client's timing is part of the measurement, and on a small machine the server, its
 * database and the client share the cores: the client asks to run first when they compete (it
 * needs a small share of one core). Without the privilege to, it runs as it is, and the summary's
 * send lag says whether that mattered. The server is started before, so it keeps the usual priority.
 */
const CLIENT_NICE = -5;
function nice(value: number): boolean {
  try {
    setPriority(value);
    return true;
  } catch {
    return false;
  }
}

const sleepUntil = (at: number) => new Promise((done) => setTimeout(done, Math.max(0, at - performance.now())));

async function setUp(port: number, database: BenchDatabase): Promise<SoakContext & { seeded: number }> {
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${database.token}` };
  const website = firstRow<{ id: string; trackingId: string; domain: string }>(
    await call('POST', `${base}/api/v1/admin/websites`, auth, { domain: 'soak.example.com', timezone: SERIES_TIMEZONE, name: 'Soak' }),
  );
  const apiKey = firstRow<{ key: string }>(await call('POST', `${base}/api/v1/admin/websites/${website.id}/apikeys`, auth, { name: 'Soak backend' })).key;
  let seeded = 0;
  if (seedEvents > 0) {
    console.error(`${database.engine}: writing ${seedEvents} synthetic events over 35 days and building their rollups`);
    const counts = await seedSyntheticTraffic(database, website.id, seedEvents);
    console.error(`${database.engine}: seeded in ${counts.seedSeconds.toFixed(1)} s, rollups built in ${counts.rebuildSeconds.toFixed(1)} s`);
    seeded = counts.events;
  }
  const context: SoakContext = {
    website: { ...website, timezone: SERIES_TIMEZONE },
    token: database.token,
    apiKey,
    audience: new Audience(website.domain),
    notes: new Handoff(),
    goalStyles: new Handoff(),
    sequence: 0,
  };
  // The audience's first page view, before the clock starts: server-side goals need a visitor
  // with a stored page view, and it shows the event is stored rather than dropped.
  const first = await MIX[0]!.prepare(context);
  const answer = await exchange(port, { ...first!, readBody: true });
  const problem = first!.settle?.(answer);
  if (answer.status !== 200 || problem || !answer.body.toString().includes('eventId')) {
    throw new Error(`the first page view was not stored (${answer.status}${problem ? `, ${problem}` : ''}): ${answer.body}`);
  }
  return { ...context, seeded };
}

async function soak(engine: Engine): Promise<SoakResult> {
  const database = await prepareDatabase(engine, tempDir, scratch.onCleanup);
  const serverEnv: Record<string, string> = {
    BENCH_DATABASE_URL: database.url,
    ...(database.pgSchema ? { BENCH_PG_SCHEMA: database.pgSchema } : {}),
    TRUST_PROXY: '1',
    BENCH_LOOP_DELAY: '1',
  };
  const server = await startChild('bench/sightline-server.ts', serverEnv, nodeArgs);
  const niced = nice(CLIENT_NICE);
  const windowCount = seconds / WINDOW_SECONDS;
  const tallies: WindowTally[] = [];
  const printed: WindowResult[] = [];
  const allLags: number[] = [];
  let sent = 0;
  let atEnd: number | null = null;
  let seeded = 0;
  let before: ServerReading | null = null;
  try {
    const context = await setUp(server.port, database);
    seeded = context.seeded;
    before = await scrape(server.port); // also starts the server's event-loop periods with the first window
    const deck = spreadDeck(MIX.map((operation) => operation.weight));
    const clientLoop = monitorEventLoopDelay({ resolution: 1 });
    clientLoop.enable();
    let cpu = process.cpuUsage();
    console.error(`${engine}: soaking for ${seconds} s at ${rate} requests/s on port ${server.port}`);

    let ended = false;
    let allPrinted!: () => void;
    const printedAll = new Promise<void>((done) => (allPrinted = done));
    const printReady = () => {
      for (let next = printed.length; next < tallies.length; next++) {
        const tally = tallies[next]!;
        if (!tally.closed || tally.unsettled > 0) return;
        const result = tally.result();
        printed.push(result);
        printWindow(engine, windowCount, result, next > 0 ? (printed[next - 1]?.server ?? null) : before);
      }
      if (ended && printed.length === tallies.length) allPrinted();
    };

    const start = performance.now() + 50;
    const trace: TracedRequest[] | null = process.env.SOAK_TRACE ? [] : null;
    const tallyAt = (index: number) => (tallies[index] ??= new WindowTally(index));
    const loop = openLoop({
      rate,
      slots: Math.round(rate * seconds),
      start,
      stopped: () => stopRequested,
      send(slot, dueAt, lagMs) {
        const tally = tallyAt(Math.floor(slot / rate / WINDOW_SECONDS + 1e-9));
        const which = deck[slot % deck.length]!;
        tally.sent += 1;
        tally.unsettled += 1;
        tally.lags.push(lagMs);
        allLags.push(lagMs);
        sent += 1;
        void (async () => {
          let outcome: string | undefined;
          try {
            const request = await MIX[which]!.prepare(context);
            if (request === null) {
              outcome = 'skipped (the create it undoes failed)';
            } else {
              try {
                const answer = await exchange(server.port, request);
                outcome = request.settle?.(answer) || (answer.status >= 200 && answer.status < 300 ? undefined : String(answer.status));
              } catch (error) {
                request.settle?.(null);
                outcome = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
              }
              const latency = performance.now() - dueAt;
              tally.latencies[which]!.push(latency);
              trace?.push({ atMs: Math.round(dueAt - start), operation: MIX[which]!.name, latencyMs: Math.round(latency * 10) / 10, ...(outcome ? { outcome } : {}) });
              if (MIX[which]!.group === 'website read' && !outcome) tally.reads.push(latency);
            }
          } catch (error) {
            outcome = `client fault: ${(error as Error).message}`;
          }
          if (outcome) tally.failures[which]![outcome] = (tally.failures[which]![outcome] ?? 0) + 1;
          if (outcome && MIX[which]!.group === 'website read') tally.readsFailed += 1;
          tally.unsettled -= 1;
          printReady();
        })();
      },
    });

    // At each window's end (or at Ctrl-C): the client's own CPU and loop delay, then the server's reading.
    const interrupted = loop.then(() => (stopRequested ? undefined : new Promise<void>(() => {})));
    const boundaries = (async () => {
      for (let index = 0; index < windowCount; index++) {
        await Promise.race([sleepUntil(start + (index + 1) * WINDOW_SECONDS * 1000), interrupted]);
        const tally = tallyAt(index);
        // A window cut short by Ctrl-C ends when it was cut.
        const endedAt = Math.min(performance.now(), start + (index + 1) * WINDOW_SECONDS * 1000);
        tally.toSeconds = Math.round((endedAt - start) / 100) / 10;
        const used = process.cpuUsage(cpu);
        cpu = process.cpuUsage();
        const elapsedUs = (tally.toSeconds - index * WINDOW_SECONDS) * 1e6;
        tally.client = { cpuPercent: ((used.user + used.system) / elapsedUs) * 100, loopDelayP99Ms: Math.max(0, clientLoop.percentile(99) / 1e6 - 1) };
        clientLoop.reset();
        try {
          tally.server = await scrape(server.port);
        } catch (error) {
          tally.serverError = (error as Error).message;
        }
        tally.closed = true;
        printReady();
        if (stopRequested) break;
      }
    })();

    sent = await loop;
    context.notes.close();
    context.goalStyles.close();
    await boundaries;
    ended = true;
    printReady();
    await Promise.race([printedAll, sleepUntil(performance.now() + REQUEST_TIMEOUT_MS + 5000)]);
    clientLoop.disable();
    if (trace) writeTrace(engine, trace);
    atEnd = await countRows(database, 'events', context.website.id).catch(() => null);
  } finally {
    if (niced) nice(0); // before the next engine's server starts: it would inherit the priority
    await server.stop();
  }
  await database.drop();

  const lag = latencies(allLags);
  const result: SoakResult = {
    engine,
    date: new Date().toISOString(),
    node: process.version,
    command: commandLine(),
    settings: { rate, seconds, seedEvents, windowSeconds: WINDOW_SECONDS },
    mix: MIX.map(({ name, group, route, weight }) => ({ name, group, route, weight })),
    targets: SOAK_TARGETS,
    events: { seeded, atEnd },
    before,
    sendLagMs: { p50: lag.p50Ms, p99: lag.p99Ms, max: lag.maxMs },
    stoppedEarly: stopRequested || sent < Math.round(rate * seconds),
    windows: printed,
  };
  const met = printSummary(result);
  console.log(`  ${engine}: ${met ? 'every target MET' : 'a target MISSED (above)'}`);
  const file = outFile(engine);
  writeSoak(file, result);
  console.log(`  raw windows written to ${file}`);
  return result;
}

let exitCode = 0;
try {
  console.log(`command: ${commandLine()}`);
  printMix(MIX, rate);
  for (const engine of engines as Engine[]) {
    if (stopRequested) break;
    if (engine === 'postgres') {
      const problem = await postgresProblem();
      if (problem) {
        console.log(`\npostgres: skipped (${problem})`);
        continue;
      }
    }
    const result = await soak(engine);
    if (result.windows.some((window) => window.routes.some((route) => Object.keys(route.failures).length > 0))) exitCode = 1;
  }
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
