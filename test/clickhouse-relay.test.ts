import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { deleteAndWait } from '../src/db/clickhouse/mutations.ts';
import { SESSION_ATTRIBUTES, attributeColumn } from '../src/db/clickhouse/session-attributes.ts';
import { attributesOf, collapsingPair, foldSession, sessionRowOf } from '../src/modules/events/clickhouse-sessions.ts';
import type { ClickHouseEventRow } from '../src/db/clickhouse/clickhouse-schema.ts';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { CLICKHOUSE_URL, describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';
import { rollupsHeld, rollupsRebuilt } from './helpers/event-rollups.ts';
import { attributesNotAsSessions, sessionsHeld, sessionsNotOnce, sessionsOfEvents } from './helpers/stored-sessions.ts';
import { type Site, Sightline, call } from './helpers/listening-sightline.ts';
import { Processes, freePort, sleep, waitForHealthy } from './helpers/processes.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

// Events reach ClickHouse through the relay (src/modules/events/clickhouse-relay.ts): an event is
// acknowledged once it is committed to the relational event_relay table, then shipped. These
// tests cut the way at each point where a crash can: ClickHouse unreachable, ClickHouse storing
// an INSERT whose answer never comes back, a shipment half stored, and Sightline killed with
// SIGKILL while clients send events. Each time every acknowledged event ends up in ClickHouse
// exactly once, and every session in the sessions table once (its collapsing pairs add up to one
// live row, the one the events give).

const scratch = mkdtempSync(join(tmpdir(), 'sightline-relay-'));
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of dropped) await drop().catch(() => {});
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * A pageview on a path of its own, so each event can be found (and counted) in ClickHouse; in a
 * session of its own unless one is named (then one visitor per session).
 */
function sendPageview(site: Site, path: string, sessionId?: string) {
  const visitorId = sessionId ? `visitor-${sessionId}` : randomUUID();
  return call(site.baseUrl, 'POST', '/api/events', {
    body: {
      websiteId: site.website.trackingId,
      domain: site.website.domain,
      href: `https://${site.website.domain}${path}`,
      visitorId,
      sessionId: sessionId ?? `session-${randomUUID()}`,
      type: 'pageview',
    },
  });
}

/** Every session once in the sessions table, as the events give it. */
async function expectSessionsOnce(ch: ClickHouse, websiteId: string) {
  const notOnce = await sessionsNotOnce(ch, websiteId);
  // On failure, the rows of those sessions (sign, version, batch) say which write was doubled or lost.
  const rows = notOnce.length === 0 ? [] : await ch.rows(sql`select session_id, sign, events, batch, started_ms from sessions
    where website_id = ${websiteId} and session_id in (${sql.join(notOnce.map((row) => String(row.session_id)))}) order by session_id, events, sign`);
  expect(notOnce, `sessions whose pairs do not add up to one live row; their rows: ${JSON.stringify(rows)}`).toEqual([]);
  const held = await sessionsHeld(ch, websiteId);
  expect(held.length).toBeGreaterThan(0);
  expect(held).toEqual(await sessionsOfEvents(ch, websiteId));
  expect(await attributesNotAsSessions(ch, websiteId), "events whose session attributes are not their session's").toEqual([]);
}

/** How many times each path is stored for the website. */
async function storedPaths(ch: ClickHouse, websiteId: string): Promise<Map<string, number>> {
  const rows = await ch.rows<{ path: string; stored: string }>(sql`select path, count() as stored from events where website_id = ${websiteId} group by path`);
  return new Map(rows.map((row) => [row.path, Number(row.stored)]));
}

function expectEachOnce(stored: Map<string, number>, acknowledged: string[]) {
  const twice = [...stored].filter(([, count]) => count > 1);
  expect(twice, 'events stored more than once').toEqual([]);
  const missing = acknowledged.filter((path) => !stored.has(path));
  expect(missing, 'acknowledged events missing from ClickHouse').toEqual([]);
}

async function overviewPageviews(site: Site) {
  return call(site.baseUrl, 'GET', `/api/v1/analytics/overview?websiteId=${site.website.id}`, { token: site.token });
}

/**
 * Sightline on a SQLite file of its own, reaching a fresh ClickHouse database through a proxy the
 * test can cut; `ch` reaches the same database directly.
 */
async function startBehindProxy(name: string) {
  const target = new URL(CLICKHOUSE_URL);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 8123));
  const database = testClickHouseDatabase();
  dropped.push(database.drop);
  const viaProxy = `http://127.0.0.1:${proxy.port}/${new URL(database.url).pathname.slice(1)}`;
  const sightline = await new Sightline().start(`sqlite:${join(scratch, `${name}-${randomBytes(3).toString('hex')}.db`)}`, undefined, { clickhouseUrl: viaProxy });
  const ch = openClickHouse(database.url, migrateClickHouse);
  const stop = async () => {
    await sightline.stop();
    await proxy.close();
    await ch.close();
  };
  return { proxy, sightline, ch, stop };
}

/** Reads the overview until ClickHouse answers again (the relay ships what waited). */
async function overviewOnceBack(site: Site) {
  let answer = await overviewPageviews(site);
  for (let i = 0; i < 50 && answer.status !== 200; i++) {
    await sleep(200);
    answer = await overviewPageviews(site);
  }
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer;
}

/**
 * Sightline behind a proxy, after a crash in the shipment of a session's second event: '/one'
 * shipped, '/two' accepted while ClickHouse was cut off, then claimed under the batch `name` and
 * the relay stopped. The test writes what the crash left in ClickHouse, then `expectFinished`.
 */
async function crashedSecondBatch(name: string) {
  const behind = await startBehindProxy(name);
  try {
    const { proxy, sightline, ch } = behind;
    const site = sightline.site;
    expect((await sendPageview(site, '/one', name)).status).toBe(200);
    expect((await overviewPageviews(site)).status).toBe(200);
    await proxy.cut();
    expect((await sendPageview(site, '/two', name)).status).toBe(200);
    const relay = sightline.app.clickhouse!.relay;
    await relay.stop();
    const db = sightline.db.kysely;
    await db.updateTable('event_relay').set({ batch: name }).execute();
    const events = (await db.selectFrom('event_relay').select('row').orderBy('seq').execute()).map((r) => JSON.parse(r.row) as ClickHouseEventRow);
    const [first] = await ch.rows<Record<string, unknown>>(sql`select * from sessions where website_id = ${site.website.id} and sign = 1`);
    return { ...behind, site, relay, events, before: sessionRowOf(first!) };
  } catch (error) {
    await behind.stop();
    throw error;
  }
}

/** ClickHouse back and the relay started again: both events and their one session stored once. */
async function expectFinished({ proxy, relay, site, ch }: Awaited<ReturnType<typeof crashedSecondBatch>>) {
  await proxy.restore();
  relay.start();
  const answer = await overviewOnceBack(site);
  expect(answer.body.data[0]).toMatchObject({ pageviews: 2, sessions: 1, bounce_rate: 0 });
  expectEachOnce(await storedPaths(ch, site.website.id), ['/one', '/two']);
  await expectSessionsOnce(ch, site.website.id);
}

describeWithClickHouse('the ClickHouse relay in one process', () => {
  it('acknowledges events while ClickHouse is unreachable, answers reads 503, and ships each event once when it is back', async () => {
    const { proxy, sightline, ch, stop } = await startBehindProxy('unreachable');
    try {
      const site = sightline.site;
      const before = Array.from({ length: 10 }, (_, i) => `/before-${i}`);
      for (const path of before) expect((await sendPageview(site, path, `kept-${path.length % 3}`)).status).toBe(200);
      expect((await overviewPageviews(site)).body.data[0].pageviews).toBe(10);

      await proxy.cut();
      const during = Array.from({ length: 10 }, (_, i) => `/during-${i}`);
      for (const path of during) expect((await sendPageview(site, path, `kept-${path.length % 3}`)).status).toBe(200);
      const read = await overviewPageviews(site);
      expect(read.status, JSON.stringify(read.body)).toBe(503);
      expect(JSON.stringify(read.body)).not.toMatch(/127\.0\.0\.1|8123|ECONNREFUSED/);
      expect((await call(site.baseUrl, 'GET', '/readyz')).status).toBe(503);

      await proxy.restore();
      const answer = await overviewOnceBack(site);
      expect(answer.body.data[0].pageviews).toBe(20);
      expect((await call(site.baseUrl, 'GET', '/readyz')).status).toBe(200);
      expectEachOnce(await storedPaths(ch, site.website.id), [...before, ...during]);
      await expectSessionsOnce(ch, site.website.id);
      expect(await sightline.db.kysely.selectFrom('event_relay').select('seq').execute()).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('does not store twice an INSERT that ClickHouse took but whose answer was lost', async () => {
    const { proxy, sightline, ch, stop } = await startBehindProxy('lost');
    try {
      const site = sightline.site;
      expect((await sendPageview(site, '/warm-up')).status).toBe(200);
      expect((await overviewPageviews(site)).status).toBe(200);
      // The next INSERT reaches ClickHouse; its answer does not reach Sightline.
      proxy.dropAfterSending('/marked-for-loss');
      expect((await sendPageview(site, '/marked-for-loss')).status).toBe(200);
      const answer = await overviewOnceBack(site);
      expect(answer.body.data[0].pageviews).toBe(2);
      expectEachOnce(await storedPaths(ch, site.website.id), ['/warm-up', '/marked-for-loss']);
      await expectSessionsOnce(ch, site.website.id);
    } finally {
      await stop();
    }
  });

  it('does not write twice the session rows of an INSERT that ClickHouse took but whose answer was lost', async () => {
    const { proxy, sightline, ch, stop } = await startBehindProxy('lost-pair');
    try {
      const site = sightline.site;
      expect((await sendPageview(site, '/first', 'lost-pair')).status).toBe(200);
      expect((await overviewPageviews(site)).status).toBe(200);
      // Only an INSERT of session rows holds a cancel row: its answer does not come back.
      proxy.dropAfterSending('"sign":-1');
      expect((await sendPageview(site, '/second', 'lost-pair')).status).toBe(200);
      const answer = await overviewOnceBack(site);
      expect(answer.body.data[0]).toMatchObject({ pageviews: 2, sessions: 1, bounce_rate: 0 });
      expectEachOnce(await storedPaths(ch, site.website.id), ['/first', '/second']);
      await expectSessionsOnce(ch, site.website.id);
    } finally {
      await stop();
    }
  });

  it('finishes session rows that a crash cut in half: the cancel row stored, the new state not', async () => {
    const crashed = await crashedSecondBatch('half-pair');
    try {
      const { ch, events, before } = crashed;
      // Of its session pair only the cancel row (an INSERT spanning two months writes two parts,
      // one of which can fail); its events with the attributes the first attempt gave them: the
      // session's, which a later event does not change.
      await ch.insert('events', events.map((event) => ({ ...event, ...attributesOf(before) })));
      await ch.insert('sessions', [{ ...before, sign: -1, batch: 'half-pair' }]);
      await expectFinished(crashed);
    } finally {
      await crashed.stop();
    }
  });

  it('finishes a shipment whose session pair a merge collapsed with the row before it', async () => {
    const crashed = await crashedSecondBatch('merged-pair');
    try {
      const { site, ch, events, before } = crashed;
      // Its events and its whole session pair stored (the crash came before its rows were deleted).
      const after = foldSession(before, events, 'merged-pair');
      await ch.insert('events', events.map((event) => ({ ...event, ...attributesOf(after) })));
      await ch.insert('sessions', collapsingPair(before, after));
      // Then a merge: the pair's cancel row and the row it cancels collapse, so the state before
      // the batch is nowhere to be read.
      await ch.command(sql`optimize table sessions final`);
      const left = await ch.rows<{ batch: string; sign: number }>(sql`select batch, sign from sessions where website_id = ${site.website.id}`);
      expect(left.map((row) => [row.batch, Number(row.sign)])).toEqual([['merged-pair', 1]]);
      await expectFinished(crashed);
    } finally {
      await crashed.stop();
    }
  });

  it("gives a session's stored events the entry and source an earlier event moves, also when a crash came before that update", async () => {
    const { proxy, sightline, ch, stop } = await startBehindProxy('moved');
    try {
      const site = sightline.site;
      for (const path of ['/second', '/third']) expect((await sendPageview(site, path, 'moved')).status).toBe(200);
      expect((await sendPageview(site, '/other', 'moved-other')).status).toBe(200);
      expect((await overviewPageviews(site)).status).toBe(200);
      const entryFilter = (path: string) =>
        call(site.baseUrl, 'GET', `/api/v1/analytics/overview?websiteId=${site.website.id}&filter_entry_page=${encodeURIComponent(path)}`, { token: site.token });
      expect((await entryFilter('/second')).body.data[0].pageviews).toBe(2);
      await expectSessionsOnce(ch, site.website.id);

      // Events of the session that happened earlier (an outage, or a past instant), each with a
      // referrer of its own, arrive later: the first ships normally, the second's batch is cut by
      // a crash after its events were stored (with the new attributes) and before anything else.
      const relay = sightline.app.clickhouse!.relay;
      const db = sightline.db.kysely;
      const [stored] = await ch.rows<Record<string, unknown>>(sql`select * from events where website_id = ${site.website.id} and path = '/second'`);
      const earlier = (id: string, path: string, minutes: number, referrerHost: string) => ({
        ...Object.fromEntries(Object.entries(stored!).filter(([name]) => !name.startsWith('s_'))),
        id, path, occurred_ms: Number(stored!.occurred_ms) - minutes * 60_000, occurred_at: Math.floor((Number(stored!.occurred_ms) - minutes * 60_000) / 1000),
        referrer_host: referrerHost, referrer_source: referrerHost,
      });
      const first = earlier('moved-first', '/first', 5, 'first.example');
      await db.insertInto('event_relay').values({ website_id: site.website.id, batch: null, row: JSON.stringify(first) }).execute();
      relay.wake();
      expect((await entryFilter('/first')).body.data[0].pageviews).toBe(3);
      expect((await entryFilter('/second')).body.data[0].pageviews).toBe(0);
      await expectSessionsOnce(ch, site.website.id);

      await proxy.cut();
      const zeroth = earlier('moved-zeroth', '/zeroth', 10, 'zeroth.example');
      await relay.stop();
      await db.insertInto('event_relay').values({ website_id: site.website.id, batch: 'cut-moved', row: JSON.stringify(zeroth) }).execute();
      await ch.insert('events', [{ ...zeroth, s_entry_hostname: stored!.hostname, s_entry_path: '/zeroth', s_referrer_host: 'zeroth.example', s_referrer_source: 'zeroth.example' }]);
      await proxy.restore();
      relay.start();

      const answer = await overviewOnceBack(site);
      expect(answer.body.data[0]).toMatchObject({ pageviews: 5, sessions: 2 });
      expect((await entryFilter('/zeroth')).body.data[0].pageviews).toBe(4);
      expect((await entryFilter('/first')).body.data[0].pageviews).toBe(0);
      const referrers = await call(site.baseUrl, 'GET', `/api/v1/analytics/overview?websiteId=${site.website.id}&filter_referrer=zeroth.example`, { token: site.token });
      expect(referrers.body.data[0].pageviews).toBe(4);
      expectEachOnce(await storedPaths(ch, site.website.id), ['/zeroth', '/first', '/second', '/third', '/other']);
      await expectSessionsOnce(ch, site.website.id);
    } finally {
      await stop();
    }
  });

  it('finishes a shipment that a crash cut in half, storing only the rows ClickHouse lacks', async () => {
    const { proxy, sightline, ch, stop } = await startBehindProxy('half');
    try {
      const site = sightline.site;
      // A first read lets the relay finish its start (the rollups' first build) before the cut.
      expect((await overviewPageviews(site)).status).toBe(200);
      await proxy.cut();
      const paths = Array.from({ length: 12 }, (_, i) => `/half-${i}`);
      for (const path of paths) expect((await sendPageview(site, path)).status).toBe(200);
      // What a crash leaves: the rows claimed under a batch name, half of them already inserted.
      // The relay is stopped first, as a crash stops it: a retry in flight would ship rows renamed under it.
      const relay = sightline.app.clickhouse!.relay;
      await relay.stop();
      const db = sightline.db.kysely;
      await db.updateTable('event_relay').set({ batch: 'cut-short' }).execute();
      const rows = await db.selectFrom('event_relay').select('row').orderBy('seq').execute();
      // Each the first event of its session: with its own entry and source, as the first attempt stored it.
      await ch.insert('events', rows.slice(0, 6).map((r) => {
        const event = JSON.parse(r.row) as Record<string, unknown>;
        return { ...event, ...Object.fromEntries(SESSION_ATTRIBUTES.map((name) => [attributeColumn(name), name.startsWith('entry_') ? event[name.slice(6)] : event[name]])) };
      }));
      // The crash came between the events' part and the views': their rollups are missing.
      await deleteAndWait(ch, 'event_hours', sql`website_id = ${site.website.id}`);
      await deleteAndWait(ch, 'event_days', sql`website_id = ${site.website.id}`);
      await proxy.restore();
      relay.start();

      const answer = await overviewOnceBack(site);
      expect(answer.body.data[0].pageviews).toBe(12);
      const stored = await storedPaths(ch, site.website.id);
      expectEachOnce(stored, paths);
      expect([...stored.values()].reduce((a, b) => a + b, 0)).toBe(12);
      await expectSessionsOnce(ch, site.website.id);
      // The batch shipped again had its days computed again from the events.
      const held = await rollupsHeld(ch, site.website.id);
      expect(held.day.length).toBeGreaterThan(0);
      expect(held).toEqual(await rollupsRebuilt(ch, site.website.id));
    } finally {
      await stop();
    }
  });
});

describeWithClickHouse('the ClickHouse relay across kill -9', () => {
  const processes = new Processes();
  afterAll(() => processes.killAll());

  it('keeps every acknowledged event, once, when Sightline is killed while clients send events', { timeout: 180_000 }, async () => {
    const database = testClickHouseDatabase();
    dropped.push(database.drop);
    const file = join(scratch, 'killed.db');
    const db = createDatabase(`sqlite:${file}`);
    await migrateToLatest(db);
    const { token } = await createAccountWithToken(db.kysely, `relay-${randomBytes(4).toString('hex')}@example.com`, 'Relay');
    await db.close();

    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: `sqlite:${file}`,
      CLICKHOUSE_URL: database.url,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      RATE_LIMIT_PUBLIC_PER_ADDRESS: '1000000',
      RATE_LIMIT_PER_CREDENTIAL: '1000000',
    };
    const start = async () => {
      const server = processes.spawn(['serve'], env);
      await waitForHealthy(baseUrl, server, 60_000);
      const { pid } = await server.waitForLog((line) => String(line.msg).startsWith('Server listening'));
      return pid as number;
    };

    let pid = await start();
    const created = await call(baseUrl, 'POST', '/api/v1/admin/websites', {
      token,
      body: { domain: `killed-${randomBytes(3).toString('hex')}.example.com`, timezone: 'UTC', name: 'Killed' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const site: Site = { baseUrl, token, website: created.body.data[0] };

    const acknowledged: string[] = [];
    for (let round = 0; round < 3; round++) {
      let running = true;
      const client = async (worker: number) => {
        for (let n = 0; running; n++) {
          const path = `/r${round}-w${worker}-${n}`;
          try {
            const answer = await sendPageview(site, path, `r${round}-w${worker}`);
            if (answer.status === 200) acknowledged.push(path);
          } catch {
            return; // The server died under this request: not acknowledged.
          }
        }
      };
      const clients = Array.from({ length: 6 }, (_, worker) => client(worker));
      await sleep(700 + round * 400);
      process.kill(pid, 'SIGKILL');
      running = false;
      await Promise.all(clients);
      pid = await start();
    }

    const ch = openClickHouse(database.url, migrateClickHouse);
    try {
      // The restarted server ships what was left; a read settles the relay first.
      const answer = await call(baseUrl, 'GET', `/api/v1/analytics/overview?websiteId=${site.website.id}`, { token });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const stored = await storedPaths(ch, site.website.id);
      expect(acknowledged.length).toBeGreaterThan(50);
      expectEachOnce(stored, acknowledged);
      // Unacknowledged events may be stored (their commit can land before the kill), once at most.
      expect(answer.body.data[0].pageviews).toBe([...stored.values()].reduce((a, b) => a + b, 0));
      // And the rollups hold each of them once, and the sessions table each session once.
      expect(await rollupsHeld(ch, site.website.id)).toEqual(await rollupsRebuilt(ch, site.website.id));
      await expectSessionsOnce(ch, site.website.id);
    } finally {
      await ch.close();
    }
  });
});
