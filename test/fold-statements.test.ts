import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { deriveBacklog } from '../src/modules/analytics/rollup-backlog.ts';
import { recordEvents } from '../src/modules/events/record-events.ts';
import { newEvent, ownerWithWebsite } from './helpers/factories.ts';
import { DERIVED, rebuilt, rowsOf } from './helpers/derived-tables.ts';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';

// The fold's writes run in groups that PostgreSQL takes as one statement each
// (src/modules/analytics/statement-groups.ts): the fold below of returning visitors (sessions that
// grow, keys that move, new days, a conversion, a visitor who starts to vary) costs 48 round trips
// on PostgreSQL where it cost 69 (issue 38: each is milliseconds under load). On both engines the
// derived tables equal a rebuild after it.

const EFFECTS = { alertCooldownSeconds: 60, mailEnabled: false };

/** Counts the statements PostgreSQL clients send meanwhile (every pooled client is a pg.Client). */
function countPostgresStatements(): { count: () => number; stop: () => void } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  let sent = 0;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    sent += 1;
    return query.apply(this, args);
  };
  return { count: () => sent, stop: () => void (prototype.query = query) };
}

let stopCounting = () => {};
afterEach(() => stopCounting());

describeEachEngine('the fold of returning visitors', (engine) => {
  const t = useTestApp(engine);

  const visit = (websiteId: string, visitor: number, session: number, path: string, occurredAt: string, extra: Partial<NewEvent> = {}) =>
    newEvent(websiteId, `v${visitor}`, {
      sessionId: `s${visitor}-${session}`,
      path,
      country: ['US', 'DE', 'FR'][visitor % 3]!,
      browser: ['Firefox', 'Chrome'][visitor % 2]!,
      referrer: visitor % 2 === 0 ? 'https://news.ycombinator.com/' : null,
      occurredAt,
      ...extra,
    });

  it('writes every derived table as a rebuild does, in few statements on PostgreSQL', async () => {
    const { website } = await ownerWithWebsite(t);
    const fold = async (events: NewEvent[]) => {
      await t.db.transaction().execute((trx) => recordEvents(trx, events, EFFECTS));
      const counter = engine === 'postgres' ? countPostgresStatements() : null;
      stopCounting = () => counter?.stop();
      await t.db.transaction().execute((trx) => deriveBacklog(trx, website.id));
      counter?.stop();
      return counter?.count() ?? 0;
    };
    const first = [];
    for (let visitor = 0; visitor < 12; visitor += 1) {
      first.push(visit(website.id, visitor, 1, '/', `2026-03-02T10:${String(visitor).padStart(2, '0')}:00.000Z`));
      first.push(visit(website.id, visitor, 1, '/pricing', `2026-03-02T10:${String(visitor).padStart(2, '0')}:30.000Z`));
    }
    await fold(first);

    // The same visitors again: their sessions go on (exit pages and counts change), some start a
    // second session the next day, one converts, one shows another country (starts to vary).
    const second = [];
    for (let visitor = 0; visitor < 12; visitor += 1) {
      second.push(visit(website.id, visitor, 1, `/docs/${visitor % 4}`, `2026-03-02T11:${String(visitor).padStart(2, '0')}:00.000Z`));
      if (visitor % 3 === 0) second.push(visit(website.id, visitor, 2, '/blog', `2026-03-03T09:${String(visitor).padStart(2, '0')}:00.000Z`));
      if (visitor === 4) second.push(visit(website.id, visitor, 1, '/pricing', '2026-03-02T11:30:00.000Z', { type: 'custom', name: 'signup' }));
      if (visitor === 5) second.push(visit(website.id, visitor, 1, '/', '2026-03-02T11:40:00.000Z', { country: 'JP' }));
    }
    const statements = await fold(second);

    const expected = await rebuilt(t.db, website.id, 'Europe/Paris');
    for (const table of DERIVED) expect(await rowsOf(t.db, table, website.id), table).toEqual(expected[table]);
    // 69 before the groups, 48 with them (begin and commit included).
    if (engine === 'postgres') expect(statements).toBeLessThanOrEqual(50);
  });
});
