import { type Kysely, sql } from 'kysely';
import type { RecordedEvent } from '../../db/event-records.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { type MatchedStep, keptFunnelSteps, matchedSteps, stepBits } from './funnel-steps-match.ts';
import { type CrossingInterval, type FunnelDay, type StepEvent, crossingIntervals, dayTransition, isIdentity, transitionOf, transitionText } from './funnel-transitions.ts';
import { LocalDays } from './zoned-time.ts';

// The funnel per stored funnel (docs/decisions.md, "The funnel per stored funnel, kept"): for
// each funnel of a website (active or not; those with a wildcard page step are not kept),
// funnel_visitor_days holds each visitor's local days whose transition changes anything
// (funnel-transitions.ts), and funnel_crossings their first crossings summed over visitors per
// interval of range starts (crossingIntervals). One writer for every change: a visitor's days
// (some, or all) are derived again from their stored step events, and the sums take out the
// crossings of their old days and put in those of the new (only the difference is written; a
// day added after the last changes nothing before it, so a fold adds its rows). The fold, a
// delete's repair, a zone move, the rebuild and a funnel's own build (funnel-build.ts) are that
// writer over different visitors and days. A funnel created or whose steps change on a website
// with events is built alone in the background (funnelsChanged), and the fold, the repairs and
// the moves keep a building funnel's rows as they keep a kept one's (every visitor, passed by its
// build or not: each writer derives whole days from the stored events, so it is idempotent).

/** Visitors per statement. */
const VISITORS_PER_STATEMENT = 400;
/** Rows per insert (7 parameters each). */
const ROWS_PER_INSERT = 500;

/** A kept funnel of a website: its id and its steps as matched. */
export interface KeptFunnel {
  id: string;
  steps: MatchedStep[];
}

/** The website's funnels whose rows the writers keep: kept (funnel_crossings_kept) or being built (funnel_builds). */
const keptFunnels = (db: Kysely<Database>, websiteId: string): Promise<KeptFunnel[]> => keptFunnelSteps(db, websiteId, { building: true });

/** Whether the event matches a step of any of the funnels. */
const isStepEvent = (funnels: readonly KeptFunnel[], event: { type: string; name: string | null; path: string | null }) => funnels.some((funnel) => stepBits(funnel.steps, event) !== 0);

/** The SQL condition on events `e` of matching a step of any of the funnels (a superset filter; matched again in JS). */
function anyStep(funnels: readonly KeptFunnel[]) {
  const paths = [...new Set(funnels.flatMap((funnel) => funnel.steps.flatMap((step) => (step.type === 'pageview' ? [step.path] : []))))];
  const names = [...new Set(funnels.flatMap((funnel) => funnel.steps.flatMap((step) => (step.type === 'goal' ? [step.name] : []))))];
  const tests = [];
  if (paths.length > 0) tests.push(sql`(e.type = 'pageview' and e.path in (${sql.join(paths)}))`);
  if (names.length > 0) tests.push(sql`(e.type = 'custom' and e.name in (${sql.join(names)}))`);
  return sql`(${sql.join(tests, sql` or `)})`;
}

/**
 * The conditions on events `e` of matching each distinct step, one per step: each is what one of
 * the events' indexes seeks (a page's path, a goal's name), so a build asks them one at a time.
 */
export function eachStepCondition(steps: readonly MatchedStep[]) {
  const distinct = [...new Map(steps.map((step) => [JSON.stringify(step), step])).values()];
  return distinct.map((step) => (step.type === 'pageview' ? sql`e.type = 'pageview' and e.path = ${step.path}` : sql`e.type = 'custom' and e.name = ${step.name}`));
}

const isoOf = (value: unknown): string => (typeof value === 'string' ? value : (value as Date).toISOString());

/** The days to derive again per visitor: some local days, or all of them. */
type VisitorDays = Map<string, Set<string> | 'all'>;

/**
 * Derives these visitors' days again (in `zone`) for every kept funnel of the website, from their
 * stored events, and moves the sums by the difference; `bounds` limits the events read to an
 * interval of instants that holds every day asked (the fold's), or none for all days.
 */
async function refreshVisitors(trx: Kysely<Database>, websiteId: string, zone: string, funnels: readonly KeptFunnel[], visitors: VisitorDays, bounds?: { from: string; to: string }): Promise<void> {
  if (funnels.length === 0 || visitors.size === 0) return;
  const localDays = new LocalDays();
  for (const ids of chunks([...visitors.keys()], VISITORS_PER_STATEMENT)) {
    const within = bounds ? sql`and e.occurred_at >= ${bounds.from} and e.occurred_at < ${bounds.to}` : sql``;
    const { rows } = await sql<{ visitor_id: string; occurred_at: unknown; type: string; name: string | null; path: string | null }>`
      select e.visitor_id, e.occurred_at, e.type, e.name, e.path from events e
      where e.website_id = ${websiteId} and e.visitor_id in (${sql.join(ids)}) ${within} and ${anyStep(funnels)}`.execute(trx);
    // Each visitor's step events, by local day, on the days asked.
    const byVisitor = new Map<string, Map<string, { at: number; event: (typeof rows)[number] }[]>>();
    for (const row of rows) {
      const at = isoOf(row.occurred_at);
      const day = localDays.dayOf(at, zone);
      const asked = visitors.get(row.visitor_id)!;
      if (asked !== 'all' && !asked.has(day)) continue;
      const days = byVisitor.get(row.visitor_id) ?? byVisitor.set(row.visitor_id, new Map()).get(row.visitor_id)!;
      (days.get(day) ?? days.set(day, []).get(day)!).push({ at: Date.parse(at), event: row });
    }
    const old = await trx
      .selectFrom('funnel_visitor_days')
      .select(['funnel_id', 'visitor_id', 'day', 'transition'])
      .where('website_id', '=', websiteId)
      .where('funnel_id', 'in', funnels.map((funnel) => funnel.id))
      .where('visitor_id', 'in', ids)
      .execute();
    const oldDays = new Map<string, FunnelDay[]>();
    for (const row of old) {
      const key = `${row.funnel_id}\u0000${row.visitor_id}`;
      (oldDays.get(key) ?? oldDays.set(key, []).get(key)!).push({ day: row.day, transition: transitionOf(row.transition) });
    }
    const removed: { funnelId: string; visitorId: string; day: string }[] = [];
    const added: { funnelId: string; visitorId: string; day: string; transition: string }[] = [];
    const deltas = new Map<string, number>();
    const shift = (funnelId: string, crossings: CrossingInterval[], sign: 1 | -1) => {
      for (const c of crossings) {
        const key = [funnelId, c.startDay, c.afterDay, c.day, c.depth].join('\u0000');
        deltas.set(key, (deltas.get(key) ?? 0) + sign);
      }
    };
    for (const funnel of funnels) {
      const stepCount = funnel.steps.length;
      for (const visitorId of ids) {
        const asked = visitors.get(visitorId)!;
        const before = oldDays.get(`${funnel.id}\u0000${visitorId}`) ?? [];
        const kept = before.filter((row) => asked !== 'all' && !asked.has(row.day));
        const fresh: FunnelDay[] = [];
        for (const [day, events] of byVisitor.get(visitorId) ?? []) {
          const stepEvents: StepEvent[] = [];
          for (const { at, event } of events) {
            const steps = stepBits(funnel.steps, event);
            if (steps !== 0) stepEvents.push({ at, steps });
          }
          if (stepEvents.length === 0) continue;
          const transition = dayTransition(stepEvents, stepCount);
          if (!isIdentity(transition)) fresh.push({ day, transition });
        }
        const replaced = before.filter((row) => !kept.includes(row));
        const unchanged = replaced.length === fresh.length && replaced.every((row) => fresh.some((f) => f.day === row.day && transitionText(f.transition) === transitionText(row.transition)));
        if (unchanged) continue;
        for (const row of replaced) removed.push({ funnelId: funnel.id, visitorId, day: row.day });
        for (const row of fresh) added.push({ funnelId: funnel.id, visitorId, day: row.day, transition: transitionText(row.transition) });
        shift(funnel.id, crossingIntervals(before, stepCount), -1);
        shift(funnel.id, crossingIntervals([...kept, ...fresh], stepCount), 1);
      }
    }
    await writeDays(trx, websiteId, removed, added);
    await writeSums(trx, websiteId, deltas);
  }
}

async function writeDays(
  trx: Kysely<Database>,
  websiteId: string,
  removed: { funnelId: string; visitorId: string; day: string }[],
  added: { funnelId: string; visitorId: string; day: string; transition: string }[],
): Promise<void> {
  for (const part of chunks(removed, ROWS_PER_INSERT)) {
    const keys = part.map((row) => sql`(${row.funnelId}, ${row.visitorId}, ${row.day})`);
    await sql`delete from funnel_visitor_days where website_id = ${websiteId} and (funnel_id, visitor_id, day) in (values ${sql.join(keys)})`.execute(trx);
  }
  for (const part of chunks(added, ROWS_PER_INSERT)) {
    await trx
      .insertInto('funnel_visitor_days')
      .values(part.map((row) => ({ website_id: websiteId, funnel_id: row.funnelId, visitor_id: row.visitorId, day: row.day, transition: row.transition })))
      .execute();
  }
}

/** Adds the differences to the sums; a sum brought to zero stays as a row of zero (the catalogue's nonZero). */
async function writeSums(trx: Kysely<Database>, websiteId: string, deltas: Map<string, number>): Promise<void> {
  const rows = [...deltas].filter(([, delta]) => delta !== 0).map(([key, visitors]) => {
    const [funnelId, startDay, afterDay, day, depth] = key.split('\u0000') as [string, string, string, string, string];
    return { website_id: websiteId, funnel_id: funnelId, start_day: startDay, after_day: afterDay, day, depth: Number(depth), visitors };
  });
  for (const part of chunks(rows, ROWS_PER_INSERT)) {
    await trx
      .insertInto('funnel_crossings')
      .values(part)
      .onConflict((oc) => oc.columns(['website_id', 'funnel_id', 'start_day', 'after_day', 'day', 'depth']).doUpdateSet({ visitors: sql`funnel_crossings.visitors + excluded.visitors` }))
      .execute();
  }
}

/** The fold: the local days of the new step events, derived again for their visitors, per website in its zone in `zones`. */
export async function foldFunnelCrossings(trx: Kysely<Database>, events: RecordedEvent[], zones: Map<string, string>): Promise<void> {
  const byWebsite = new Map<string, RecordedEvent[]>();
  for (const event of events) (byWebsite.get(event.websiteId) ?? byWebsite.set(event.websiteId, []).get(event.websiteId)!).push(event);
  for (const [websiteId, theirs] of byWebsite) {
    const funnels = await keptFunnels(trx, websiteId);
    const steps = theirs.filter((event) => isStepEvent(funnels, event));
    if (steps.length === 0) continue;
    const zone = zones.get(websiteId)!;
    const localDays = new LocalDays();
    const visitors: VisitorDays = new Map();
    let from = steps[0]!.occurredAt;
    let to = from;
    for (const event of steps) {
      const days = visitors.get(event.visitorId) ?? visitors.set(event.visitorId, new Set()).get(event.visitorId)!;
      (days as Set<string>).add(localDays.dayOf(event.occurredAt, zone));
      if (event.occurredAt < from) from = event.occurredAt;
      if (event.occurredAt > to) to = event.occurredAt;
    }
    // Every event of the days asked: from a day before the earliest to a day after the latest (no local day is longer than 26 hours).
    const widen = (iso: string, hours: number) => new Date(Date.parse(iso) + hours * 3_600_000).toISOString();
    await refreshVisitors(trx, websiteId, zone, funnels, visitors, { from: widen(from, -27), to: widen(to, 27) });
  }
}

/** These visitors' days all derived again in `zone` (a delete's repair, a chunk of a zone move). */
export async function refreshFunnelVisitors(trx: Kysely<Database>, websiteId: string, zone: string, visitorIds: string[]): Promise<void> {
  const funnels = await keptFunnels(trx, websiteId);
  await refreshVisitors(trx, websiteId, zone, funnels, new Map(visitorIds.map((id) => [id, 'all' as const])));
}

/** These visitors' days all derived again in `zone` for one funnel alone (a chunk of its build, funnel-build.ts). */
export async function deriveFunnelVisitors(trx: Kysely<Database>, websiteId: string, zone: string, funnel: KeptFunnel, visitorIds: string[]): Promise<void> {
  await refreshVisitors(trx, websiteId, zone, [funnel], new Map(visitorIds.map((id) => [id, 'all' as const])));
}

/**
 * Both tables derived again for the whole website from its events (the tests' oracle, the bench's
 * seed), for its kept funnels: a funnel whose own build runs has rows for some visitors only
 * (funnel-build.ts), whole once it is kept.
 */
export async function rebuildFunnelCrossings(trx: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  await trx.deleteFrom('funnel_crossings').where('website_id', '=', websiteId).execute();
  await trx.deleteFrom('funnel_visitor_days').where('website_id', '=', websiteId).execute();
  const funnels = await keptFunnelSteps(trx, websiteId);
  if (funnels.length === 0) return;
  const { rows } = await sql<{ visitor_id: string }>`select distinct e.visitor_id from events e where e.website_id = ${websiteId} and ${anyStep(funnels)}`.execute(trx);
  for (const part of chunks(rows.map((row) => row.visitor_id), VISITORS_PER_STATEMENT)) {
    await refreshVisitors(trx, websiteId, timezone, funnels, new Map(part.map((id) => [id, 'all' as const])));
  }
}

/** The website's funnels whose steps can be kept (no wildcard page step). */
async function keepableFunnelIds(db: Kysely<Database>, websiteId: string, funnelIds?: string[]): Promise<string[]> {
  let query = db.selectFrom('funnels').select(['id', 'steps']).where('website_id', '=', websiteId);
  if (funnelIds !== undefined) query = query.where('id', 'in', funnelIds);
  const rows = await query.execute();
  return rows.filter((row) => matchedSteps(JSON.parse(row.steps) as { type: string; url?: string; goalName?: string }[]) !== null).map((row) => row.id);
}

/**
 * A build of the website cleared its derived tables (derived-build.ts): from now on every funnel
 * of the website that can be kept is, and the build's chunks derive its rows with the others'
 * (it takes over the funnels' own builds, whose rows it cleared).
 */
export async function keepEveryFunnel(trx: Kysely<Database>, websiteId: string): Promise<void> {
  await trx.deleteFrom('funnel_builds').where('website_id', '=', websiteId).execute();
  await trx.deleteFrom('funnel_crossings_kept').where('website_id', '=', websiteId).execute();
  const ids = await keepableFunnelIds(trx, websiteId);
  if (ids.length > 0) await trx.insertInto('funnel_crossings_kept').values(ids.map((funnelId) => ({ website_id: websiteId, funnel_id: funnelId }))).execute();
}

/**
 * Funnels created, imported or given other steps: their rows go, and they are kept at once where
 * the website has no event yet (nothing to derive); otherwise each is built alone in the
 * background (funnel_builds: funnel-build.ts), its report read from the raw events until its
 * build ends. The caller holds the website's lock and wakes the derived-data worker after commit.
 */
export async function funnelsChanged(trx: Kysely<Database>, websiteId: string, funnelIds: string[], now = new Date()): Promise<void> {
  if (funnelIds.length === 0) return;
  await dropFunnelRows(trx, websiteId, funnelIds);
  const ids = await keepableFunnelIds(trx, websiteId, funnelIds);
  if (ids.length === 0) return;
  const hasEvents = await trx.selectFrom('events').select('id').where('website_id', '=', websiteId).limit(1).executeTakeFirst();
  if (!hasEvents) {
    await trx.insertInto('funnel_crossings_kept').values(ids.map((funnelId) => ({ website_id: websiteId, funnel_id: funnelId }))).execute();
    return;
  }
  await trx
    .insertInto('funnel_builds')
    .values(ids.map((funnelId) => ({ website_id: websiteId, funnel_id: funnelId, started_at: now.toISOString() })))
    .execute();
}

/** The funnels are neither kept nor built any more: their rows and their builds go. */
async function dropFunnelRows(trx: Kysely<Database>, websiteId: string, funnelIds: string[]): Promise<void> {
  for (const table of ['funnel_builds', 'funnel_crossings_kept', 'funnel_crossings', 'funnel_visitor_days'] as const) {
    await trx.deleteFrom(table).where('website_id', '=', websiteId).where('funnel_id', 'in', funnelIds).execute();
  }
}

/**
 * A funnel deleted (deactivated): a kept one stays kept (PUT revives it as it was), but one whose
 * build runs drops it and the rows derived so far, rather than spend the worker on a deleted
 * funnel; `funnelRevived` builds it again.
 */
export async function funnelDeleted(trx: Kysely<Database>, websiteId: string, funnelId: string): Promise<void> {
  const building = await trx.selectFrom('funnel_builds').select('funnel_id').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).executeTakeFirst();
  if (building) await dropFunnelRows(trx, websiteId, [funnelId]);
}

/** A deleted funnel revived: built again (or kept at once) unless it is still kept. */
export async function funnelRevived(trx: Kysely<Database>, websiteId: string, funnelId: string): Promise<void> {
  const kept = await trx.selectFrom('funnel_crossings_kept').select('funnel_id').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).executeTakeFirst();
  const building = await trx.selectFrom('funnel_builds').select('funnel_id').where('website_id', '=', websiteId).where('funnel_id', '=', funnelId).executeTakeFirst();
  if (!kept && !building) await funnelsChanged(trx, websiteId, [funnelId]);
}
