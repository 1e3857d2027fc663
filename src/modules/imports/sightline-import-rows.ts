import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { isId } from '../../lib/ids.ts';
import { countPayments, funnelStepsChanged } from '../analytics/maintainer.ts';
import { storeEvents } from '../events/record-events.ts';
import type { ParsedRecord } from './sightline-records.ts';

// Storing a chunk of an import of Sightline's own export as the target website's own rows, in the
// job's transaction: events through ingestion's writer (storeEvents: the events table and the
// rollups' backlog, or the ClickHouse relay; the goal statistics), payments through the revenue
// they move, the other records as they are. Each stored row is named in import_raw_rows, so the
// import is deleted as one.
//
// Ids are global primary keys: a row keeps its id when no row has it yet (a move to a fresh
// installation keeps every id), and takes an id derived from (target website, original id)
// otherwise (the same export imported into a second website of the same installation). A row
// whose id, or derived id, the target website already holds was imported before: it is skipped as
// already_present, so importing an overlapping export again adds only what is new.

const IDS_PER_STATEMENT = 400;

export type Kind = ParsedRecord['type'];

export interface ChunkOutcome {
  kept: Partial<Record<Kind, number>>;
  present: Partial<Record<Kind, number>>;
  /** The stored events' instants, for the import's first and last day. */
  eventInstants: string[];
  /** Website records whose settings were not applied (the website had data of its own). */
  settingsKept: number;
}

export interface ChunkTarget {
  websiteId: string;
  importId: string;
  eventsInClickHouse: boolean;
  /** Whether the website record's settings are to be applied (a fresh website: docs/decisions.md). */
  applySettings: boolean;
  /** With ClickHouse: the chunk's event ids the website holds there already. */
  presentInClickHouse?: Set<string>;
}

/** The id a row takes when its own is taken elsewhere: 24 hex characters, stable for (website, kind, original id). */
export function derivedId(websiteId: string, kind: string, originalId: string): string {
  return createHash('sha256').update(`${websiteId}\u0000${kind}\u0000${originalId}`).digest('hex').slice(0, 24);
}

type IdTable = 'events' | 'payments' | 'funnels' | 'notes';

/**
 * For each original id: the id to store it under, or null when the website already holds it. In
 * ClickHouse mode the events are not in the relational database: they keep their ids (ClickHouse
 * has no unique key, so another website's ids do not clash), and those the website holds there
 * (`present`, asked before the transaction) are skipped.
 */
async function storedIds(
  trx: Kysely<Database>,
  table: IdTable | null,
  target: ChunkTarget,
  kind: Kind,
  originals: string[],
  present?: Set<string>,
): Promise<(string | null)[]> {
  const candidates = originals.map((id) => ({ own: isId(id) ? id : null, derived: derivedId(target.websiteId, kind, id) }));
  const owners = new Map<string, string>();
  for (const id of present ?? []) owners.set(id, target.websiteId);
  if (table !== null) {
    const all = [...new Set(candidates.flatMap((c) => (c.own ? [c.own, c.derived] : [c.derived])))];
    for (const part of chunks(all, IDS_PER_STATEMENT)) {
      const rows = await trx.selectFrom(table).select(['id', 'website_id']).where('id', 'in', part).execute();
      for (const row of rows) owners.set(row.id, row.website_id);
    }
  }
  const seen = new Set<string>();
  return candidates.map(({ own, derived }) => {
    let id: string | null;
    if ((own !== null && owners.get(own) === target.websiteId) || owners.has(derived)) id = null;
    else id = own !== null && !owners.has(own) ? own : derived;
    // The same id twice in one chunk: the second is the first again.
    if (id !== null && seen.has(id)) id = null;
    if (id !== null) seen.add(id);
    return id;
  });
}

async function remember(trx: Kysely<Database>, importId: string, kind: Kind, rowIds: string[]): Promise<void> {
  for (const part of chunks(rowIds, IDS_PER_STATEMENT)) {
    await trx
      .insertInto('import_raw_rows')
      .values(part.map((rowId) => ({ import_id: importId, kind, row_id: rowId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

type Of<K extends Kind> = Extract<ParsedRecord, { type: K }>['row'];

/** Stores one chunk's records; in the caller's transaction. */
export async function storeChunk(trx: Kysely<Database>, target: ChunkTarget, records: ParsedRecord[]): Promise<ChunkOutcome> {
  const outcome: ChunkOutcome = { kept: {}, present: {}, eventInstants: [], settingsKept: 0 };
  const count = (kind: Kind, kept: number, total: number) => {
    outcome.kept[kind] = (outcome.kept[kind] ?? 0) + kept;
    outcome.present[kind] = (outcome.present[kind] ?? 0) + total - kept;
  };
  const of = <K extends Kind>(kind: K) => records.filter((record) => record.type === kind).map((record) => record.row as Of<K>);

  for (const settings of of('website')) {
    if (target.applySettings) {
      if (Object.keys(settings).length > 0) {
        await trx.updateTable('websites').set({ ...settings, updated_at: new Date().toISOString() } as never).where('id', '=', target.websiteId).execute();
      }
      outcome.kept.website = (outcome.kept.website ?? 0) + 1;
    } else {
      outcome.settingsKept += 1;
    }
  }

  const funnels = of('funnel');
  if (funnels.length > 0) {
    const ids = await storedIds(trx, 'funnels', target, 'funnel', funnels.map((f) => f.id));
    const rows = [];
    for (const [i, funnel] of funnels.entries()) {
      if (ids[i] === null) continue;
      // An active funnel of the same name is already there (names are unique among active ones).
      if (funnel.is_active && (await sql`select 1 from funnels where website_id = ${target.websiteId} and is_active = ${true} and lower(name) = lower(${funnel.name})`.execute(trx)).rows.length > 0) continue;
      rows.push({ ...funnel, id: ids[i]! });
    }
    if (rows.length > 0) {
      await trx.insertInto('funnels').values(rows).execute();
      // Kept at once on a website without events (the imported events then fold in as ingested), else built in the background (funnel-build.ts).
      await funnelStepsChanged(trx, target.websiteId, rows.map((row) => row.id));
    }
    await remember(trx, target.importId, 'funnel', rows.map((r) => r.id));
    count('funnel', rows.length, funnels.length);
  }

  const customizations = of('goalCustomization');
  if (customizations.length > 0) {
    const stored = await trx
      .insertInto('goal_customizations')
      .values(customizations)
      .onConflict((oc) => oc.columns(['website_id', 'goal_name']).doNothing())
      .returning('goal_name')
      .execute();
    await remember(trx, target.importId, 'goalCustomization', stored.map((r) => r.goal_name));
    count('goalCustomization', stored.length, customizations.length);
  }

  const rates = of('currencyRate');
  if (rates.length > 0) {
    const stored = await trx
      .insertInto('currency_rates')
      .values(rates)
      .onConflict((oc) => oc.columns(['website_id', 'currency']).doNothing())
      .returning('currency')
      .execute();
    await remember(trx, target.importId, 'currencyRate', stored.map((r) => r.currency));
    count('currencyRate', stored.length, rates.length);
  }

  const notes = of('note');
  if (notes.length > 0) {
    const ids = await storedIds(trx, 'notes', target, 'note', notes.map((n) => n.id));
    const rows = notes.flatMap((note, i) => (ids[i] === null ? [] : [{ ...note, id: ids[i]! }]));
    for (const part of chunks(rows, 100)) await trx.insertInto('notes').values(part).execute();
    await remember(trx, target.importId, 'note', rows.map((r) => r.id));
    count('note', rows.length, notes.length);
  }

  const profiles = of('visitorProfile');
  if (profiles.length > 0) {
    let stored = 0;
    for (const part of chunks(profiles, 100)) {
      const rows = await trx
        .insertInto('visitor_profiles')
        .values(part)
        .onConflict((oc) => oc.columns(['website_id', 'visitor_id']).doNothing())
        .returning('visitor_id')
        .execute();
      await remember(trx, target.importId, 'visitorProfile', rows.map((r) => r.visitor_id));
      stored += rows.length;
    }
    count('visitorProfile', stored, profiles.length);
  }

  const events = of('event');
  if (events.length > 0) {
    // The payments below take the website's lock: taken first, before the events' inserts take
    // theirs (src/db/locks.ts), in the order a time-zone move's chunk takes both, so neither waits
    // for the other in a circle.
    if (of('payment').length > 0) await lockWebsite(trx, target.websiteId);
    const ids = target.eventsInClickHouse
      ? await storedIds(trx, null, target, 'event', events.map((e) => e.id), target.presentInClickHouse)
      : await storedIds(trx, 'events', target, 'event', events.map((e) => e.id));
    const kept = events.flatMap((event, i) => (ids[i] === null ? [] : [{ ...event, id: ids[i]! }]));
    await storeEvents(trx, kept, { eventsInClickHouse: target.eventsInClickHouse });
    await remember(trx, target.importId, 'event', kept.map((e) => e.id));
    outcome.eventInstants.push(...kept.map((e) => e.occurredAt));
    count('event', kept.length, events.length);
  }

  const payments = of('payment');
  if (payments.length > 0) {
    // Under the website's lock (an import's page of payments is counted in its own transaction), the breakdowns' revenue moved after the insert.
    await lockWebsite(trx, target.websiteId);
    const ids = await storedIds(trx, 'payments', target, 'payment', payments.map((p) => p.id));
    const rows = payments.flatMap((payment, i) => (ids[i] === null ? [] : [{ ...payment, id: ids[i]! }]));
    const stored: string[] = [];
    for (const part of chunks(rows, 100)) {
      const inserted = await trx
        .insertInto('payments')
        .values(part)
        .onConflict((oc) => oc.columns(['website_id', 'transaction_id']).doNothing())
        .returning('id')
        .execute();
      stored.push(...inserted.map((r) => r.id));
    }
    for (const part of chunks(stored, IDS_PER_STATEMENT)) {
      await countPayments(trx, target.websiteId, sql`p.id in (${sql.join(part)})`);
    }
    await remember(trx, target.importId, 'payment', stored);
    count('payment', stored.length, payments.length);
  }
  return outcome;
}
