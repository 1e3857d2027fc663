import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../src/db/schema.ts';
import { derivedDataChunk } from '../../src/modules/analytics/derived-chunk.ts';
import type { NewEvent } from '../../src/modules/events/event.types.ts';
import { recordEvents } from '../../src/modules/events/record-events.ts';
import type { TestApp } from './app.ts';
import { DERIVED, rebuilt, rowsOf } from './derived-tables.ts';
import { newEvent } from './factories.ts';

// Random but replayable traffic for the tests of background work on derived data (a time-zone
// move, day-relocation.test.ts; a build, derived-build.test.ts), and their one check: every
// derived table equals a rebuild from the raw events.

const EFFECTS = { alertCooldownSeconds: 60, mailEnabled: false };

export const DERIVED_DATA_HEADER = 'x-sightline-derived-data';

/** Visitor ids whose byte order differs from a case-blind or accent-aware collation's. */
export const VISITORS = ['Zed', 'alpha', 'Beta', 'beta', 'émile', 'emile', 'z-9', 'Z-10', '0042', 'ÿves', 'ōno', 'omega', 'Alpha', '_x', 'x_'];

/** Stored as ingestion stores a batch, in time order (as clients send them), but derived only when something settles them. */
export async function record(t: TestApp, events: NewEvent[]): Promise<void> {
  const ordered = [...events].sort((a, b) => (a.occurredAt < b.occurredAt ? -1 : a.occurredAt > b.occurredAt ? 1 : 0));
  await t.db.transaction().execute((trx) => recordEvents(trx, ordered, EFFECTS));
}

export async function expectRebuilt(db: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  const expected = await rebuilt(db, websiteId, timezone);
  for (const table of DERIVED) expect(await rowsOf(db, table, websiteId), table).toEqual(expected[table]);
}

/** A small deterministic generator, so a failing sequence can be replayed from its seed. */
export function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Events of a visitor from `clock` on (minutes to hours apart, across local midnights, where zones
 * disagree on the day), with goals, server goals and outbound links. Each batch comes after the
 * ones before: the day rollups of a visitor's late event in another session of the same day are
 * known to differ from a rebuild's last_session_id (noted in docs/decisions.md), which these
 * tests are not about.
 */
export function eventsOf(websiteId: string, visitorId: string, next: () => number, count: number, clock: { at: number }): NewEvent[] {
  const pick = <T,>(list: T[]) => list[Math.floor(next() * list.length)]!;
  return Array.from({ length: count }, (_, i) => {
    clock.at += Math.floor(next() * 9 * 3600_000) + 60_000;
    const occurredAt = new Date(clock.at).toISOString();
    const kind = next();
    const sessionId = `s-${visitorId}-${occurredAt.slice(0, 10)}`;
    const base = { sessionId, occurredAt, path: `${pick(['/', '/pricing', '/docs'])}${i % 3 === 0 ? '' : '?v=1'}`, country: pick(['US', 'FR', 'JP']), browser: pick(['Firefox', 'Chrome']), referrer: pick([null, 'https://news.ycombinator.com/']) };
    if (kind < 0.15) return newEvent(websiteId, visitorId, { ...base, type: 'custom', name: 'signup' });
    if (kind < 0.22) return newEvent(websiteId, visitorId, { type: 'custom', name: 'upgrade', source: 'api', sessionId: null, hostname: null, path: null, occurredAt });
    if (kind < 0.28) return newEvent(websiteId, visitorId, { ...base, type: 'external_link', metadata: { url: 'https://elsewhere.example.org/' } });
    return newEvent(websiteId, visitorId, base);
  });
}

/** A clock per batch: each visitor's events of a batch start at the batch's time. */
export const batchClock = (at: number) => () => ({ at });
export const MARCH = Date.parse('2026-03-01T00:00:00.000Z');
/** Batch a: the first ten days of March; batch b: the ten after. */
export const startA = batchClock(MARCH);
export const startB = batchClock(MARCH + 11 * 86_400_000);

/** Runs the website's background work (a build, else a move) in chunks of `size` (events of a build, visitors of a move) until none is left; how many chunks ran. */
export async function finish(db: Kysely<Database>, websiteId: string, size: number): Promise<number> {
  for (let chunks = 1; ; chunks++) {
    const result = await db.transaction().execute((trx) => derivedDataChunk(trx, websiteId, size));
    if (result.finished) return chunks;
    if (chunks > 10_000) throw new Error('the background work does not end');
  }
}
