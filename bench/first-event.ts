import { sql } from 'kysely';
import type { Engine } from '../src/db/database.ts';
import { createDatabase } from '../src/db/database.ts';
import { CHROME, browserEvent } from './browser-event.ts';
import { call, firstRow } from './call.ts';
import { startChild } from './children.ts';
import { postgresProblem, prepareDatabase } from './prepare.ts';
import { benchScratch } from './scratch.ts';
import { scrape } from './soak-metrics.ts';
import { percentile } from './website-api.ts';

// `node bin/run-ts.js bench/first-event.ts` (issue 38's "a restart followed by the first event
// from a real address shows no stall"): on each of FIRST_EVENT_ENGINES (default
// "sqlite,postgres"), the real server in a child process is started, given a website, stopped
// and started again; the moment it reports its port, the first page view comes from a public
// IPv4 address, the next from a public IPv6 one (each family its own GeoIP file), then
// FIRST_EVENT_MORE (default 50) more from other public addresses one after the other. Printed:
// the restart's time to listening, each of the first two events' answer time, the others' p50
// and max, the event loop's delay over all of it (from /metrics), and the countries stored for
// them (a lookup that was skipped would store none).

const engines = (process.env.FIRST_EVENT_ENGINES || 'sqlite,postgres').split(',').map((name) => name.trim() as Engine);
const more = Number(process.env.FIRST_EVENT_MORE || 50);

/** Public addresses of well-known resolvers and sites, one per family first, then alternating. */
const IPV4 = ['8.8.8.8', '1.1.1.1', '9.9.9.9', '208.67.222.222', '185.228.168.9', '94.140.14.14', '77.88.8.8', '114.114.114.114'];
const IPV6 = ['2001:4860:4860::8888', '2606:4700:4700::1111', '2620:fe::fe', '2a10:50c0::ad1:ff', '2a02:6b8::feed:0ff'];

const scratch = benchScratch('sightline-first-event-');

async function pageView(port: number, website: { trackingId: string; domain: string }, n: number, address: string): Promise<number> {
  const visit = {
    visitorId: `first-event-visitor-${n}`,
    sessionId: `first-event-session-${n}`,
    visitorFirstSeenAt: new Date().toISOString(),
    visitorSessionNumber: 1,
    href: `https://${website.domain}/first-${n}`,
    referrer: null,
    userAgent: CHROME,
  };
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/api/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': CHROME, 'x-forwarded-for': address, origin: `https://${website.domain}` },
    body: browserEvent(website, visit),
  });
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`page view ${n} from ${address} answered ${response.status}`);
  return ms;
}

async function measure(engine: Engine): Promise<void> {
  const database = await prepareDatabase(engine, scratch.dir, scratch.onCleanup);
  const env: Record<string, string> = {
    BENCH_DATABASE_URL: database.url,
    ...(database.pgSchema ? { BENCH_PG_SCHEMA: database.pgSchema } : {}),
    TRUST_PROXY: '1',
    BENCH_LOOP_DELAY: '1',
  };
  const first = await startChild('bench/sightline-server.ts', env);
  const auth = { authorization: `Bearer ${database.token}` };
  const website = firstRow<{ id: string; trackingId: string; domain: string }>(
    await call('POST', `http://127.0.0.1:${first.port}/api/v1/admin/websites`, auth, { domain: 'first-event.example.com', timezone: 'UTC', name: 'First event' }),
  );
  await first.stop();

  const started = performance.now();
  const server = await startChild('bench/sightline-server.ts', env);
  const listeningMs = performance.now() - started;
  await scrape(server.port); // starts the loop-delay period with the first event
  const firstIpv4 = await pageView(server.port, website, 0, IPV4[0]!);
  const firstIpv6 = await pageView(server.port, website, 1, IPV6[0]!);
  const others: number[] = [];
  for (let n = 2; n < 2 + more; n++) {
    const pool = n % 2 === 0 ? IPV4 : IPV6;
    others.push(await pageView(server.port, website, n, pool[n % pool.length]!));
  }
  const loop = (await scrape(server.port)).loopDelayMs;
  await server.stop();

  const db = createDatabase(database.url, database.pgSchema ? { pgSchema: database.pgSchema } : {});
  let countries: string[];
  try {
    const { rows } = await sql<{ country: string | null }>`select country from events where website_id = ${website.id} order by occurred_at`.execute(db.kysely);
    countries = rows.map((row) => row.country ?? '(none)');
  } finally {
    await db.close();
  }
  others.sort((a, b) => a - b);
  console.log(`${engine}: restart to listening ${listeningMs.toFixed(0)} ms (the GeoIP files read before it listens)`);
  console.log(`  first event, from ${IPV4[0]}: ${firstIpv4.toFixed(1)} ms; first from ${IPV6[0]}: ${firstIpv6.toFixed(1)} ms`);
  console.log(`  the next ${others.length}, one at a time: p50 ${percentile(others, 50).toFixed(1)} ms, max ${others.at(-1)!.toFixed(1)} ms`);
  console.log(`  event-loop delay over all of them: p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms`);
  console.log(`  countries stored: ${countries.length} events, ${new Set(countries).size} distinct (${[...new Set(countries)].slice(0, 8).join(', ')})`);
}

try {
  for (const engine of engines) {
    if (engine === 'postgres') {
      const problem = await postgresProblem();
      if (problem) {
        console.log(`postgres: skipped (${problem})`);
        continue;
      }
    }
    await measure(engine);
  }
} finally {
  await scratch.cleanup();
}
