import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import type { EventLog } from '../events/event-log.ts';
import type { EventCursor } from '../events/event-export.ts';
import * as repo from './raw-export.repository.ts';

// The website's raw data as NDJSON for leaving, and for a later import to rebuild every read
// (docs/export-format.md): a header line, then one line per record, then a trailer that counts
// them. Events and payments come in keyset pages of PAGE_SIZE, each its own short query: never
// all rows in memory, never one long transaction.

export const EXPORT_FORMAT = 'sightline-export';
export const EXPORT_VERSION = 1;
export const PAGE_SIZE = 1000;

/** Columns stored as 0/1 on SQLite and as booleans on PostgreSQL: written as true/false. */
const BOOLEAN_COLUMNS = new Set(['is_cookieless', 'include_renewal_revenue', 'is_active', 'renewal', 'refunded', 'is_free_trial']);

type Row = Record<string, unknown>;

function normalised(row: Row): Row {
  const out: Row = {};
  for (const [name, value] of Object.entries(row)) out[name] = BOOLEAN_COLUMNS.has(name) && value !== null ? Boolean(value) : value;
  return out;
}

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const record = (type: string, row: Row) => line({ type, data: normalised(row) });

export interface RawExportDeps {
  db: Kysely<Database>;
  eventLog: EventLog;
  pageSize?: number;
  now?: () => Date;
}

/** The header, read before anything is sent, so an unknown website is a 404 and not a cut stream. */
export async function rawExportHeader(deps: RawExportDeps, websiteId: string): Promise<{ header: string; website: Row }> {
  const website = await repo.findWebsiteRow(deps.db, websiteId);
  if (!website) throw notFound('Website not found');
  const header = line({
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: (deps.now?.() ?? new Date()).toISOString(),
    websiteId,
    domain: website.domain,
  });
  return { header, website };
}

/** Every line after the header, page by page, as the reader asks for them. */
export async function* rawExportBody(deps: RawExportDeps, websiteId: string, website: Row): AsyncGenerator<string> {
  const size = deps.pageSize ?? PAGE_SIZE;
  const counts: Record<string, number> = { website: 1, funnel: 0, goalCustomization: 0, currencyRate: 0, note: 0, visitorProfile: 0, event: 0, payment: 0 };
  yield record('website', website);
  for (const row of await repo.funnelRows(deps.db, websiteId)) {
    counts.funnel! += 1;
    yield record('funnel', row);
  }
  for (const row of await repo.goalCustomizationRows(deps.db, websiteId)) {
    counts.goalCustomization! += 1;
    yield record('goalCustomization', row);
  }
  for (const row of await repo.currencyRateRows(deps.db, websiteId)) {
    counts.currencyRate! += 1;
    yield record('currencyRate', row);
  }
  for (let after: string | null = null; ; ) {
    const page = await repo.notePage(deps.db, websiteId, after, size);
    for (const row of page) yield record('note', row);
    counts.note! += page.length;
    if (page.length < size) break;
    after = page.at(-1)!.id;
  }
  for (let after: string | null = null; ; ) {
    const page = await repo.visitorProfilePage(deps.db, websiteId, after, size);
    for (const row of page) yield record('visitorProfile', row);
    counts.visitorProfile! += page.length;
    if (page.length < size) break;
    after = page.at(-1)!.visitor_id;
  }
  for (let after: EventCursor | null = null; ; ) {
    const page = await deps.eventLog.eventPage(websiteId, after, size);
    if (page.length > 0) yield page.map((row) => record('event', row)).join('');
    counts.event! += page.length;
    if (page.length < size) break;
    after = { occurredAt: page.at(-1)!.occurred_at, id: page.at(-1)!.id };
  }
  for (let after: EventCursor | null = null; ; ) {
    const page = await repo.paymentPage(deps.db, websiteId, after, size);
    if (page.length > 0) yield page.map((row) => record('payment', row)).join('');
    counts.payment! += page.length;
    if (page.length < size) break;
    after = { occurredAt: page.at(-1)!.occurred_at, id: page.at(-1)!.id };
  }
  yield line({ type: 'end', counts });
}
