import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { type Role, roleAllows } from '../../auth/policy.ts';
import { AppError, badRequest, forbidden, invalidField, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { parseFilters } from '../stats/stats.filters.ts';
import { presentSegment } from './segments.presenter.ts';
import * as repo from './segments.repository.ts';
import { type CreateSegmentInput, SEGMENTS_PER_WEBSITE_MAX, type SegmentView, type UpdateSegmentInput } from './segments.schemas.ts';

// Who may do what with a segment (docs/decisions.md, "Segments"):
// - anyone with a role on the website (viewers too) saves personal segments, seen by them alone;
// - sharing one with the team takes the right to change the website (owner or member);
// - a shared segment is changed or deleted by its author or the website's owner; a personal one
//   by its author only (to anyone else it does not exist: 404).

export interface SegmentCaller {
  websiteId: string;
  accountId: string;
  role: Role;
}

const mayShare = (caller: SegmentCaller) => roleAllows(caller.role, 'manage');
const mayEdit = (caller: SegmentCaller, row: repo.SegmentRow) => row.owner_id === caller.accountId || (Boolean(row.shared) && caller.role === 'owner');

/**
 * The filters checked by the parser the stats routes use, so a saved segment always applies. Only
 * the filter_ spelling is kept (the bare alias would collide with other URL parameters).
 */
export function checkedFilters(filters: Record<string, string>): string {
  for (const name of Object.keys(filters)) {
    if (!name.startsWith('filter_')) throw invalidField(`body.filters.${name}`, 'is not a filter; filters are filter_ followed by a dimension, e.g. filter_country');
  }
  try {
    parseFilters(filters);
  } catch (error) {
    // The parser names query.<param>; here the same value sits in the body.
    if (error instanceof AppError && error.statusCode === 400) {
      const detail = error.details?.[0];
      const path = detail ? detail.path.replace(/^query\./, 'body.filters.') : 'body.filters';
      throw badRequest(error.message.replace(/^query\./, 'body.filters.'), [{ path, message: detail?.message ?? error.message }]);
    }
    throw error;
  }
  const sorted = Object.fromEntries(Object.entries(filters).sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify(sorted);
}

function nameOf(name: string): string {
  if (name.trim() === '') throw invalidField('body.name', 'must not be only white space');
  return name.trim();
}

const present = (caller: SegmentCaller, row: repo.SegmentWithOwner) => presentSegment(row, mayEdit(caller, row));

export async function listSegments(db: Kysely<Database>, caller: SegmentCaller): Promise<SegmentView[]> {
  const rows = await repo.listVisibleSegments(db, caller.websiteId, caller.accountId);
  return rows.map((row) => present(caller, row));
}

export async function createSegment(db: Kysely<Database>, caller: SegmentCaller, input: CreateSegmentInput): Promise<SegmentView> {
  const shared = input.shared ?? false;
  if (shared && !mayShare(caller)) throw forbidden('Only the owner and members of a website may share a segment with its team; save it as personal');
  const name = nameOf(input.name);
  const filters = checkedFilters(input.filters);
  if ((await repo.countSegments(db, caller.websiteId)) >= SEGMENTS_PER_WEBSITE_MAX) {
    throw badRequest(`segment limit reached: a website keeps at most ${SEGMENTS_PER_WEBSITE_MAX} segments`);
  }
  const now = new Date().toISOString();
  const id = newId();
  await repo.insertSegment(db, { id, website_id: caller.websiteId, owner_id: caller.accountId, name, filters, shared, created_at: now, updated_at: now });
  return present(caller, (await repo.findVisibleSegment(db, caller.websiteId, id, caller.accountId))!);
}

async function editable(db: Kysely<Database>, caller: SegmentCaller, segmentId: string): Promise<repo.SegmentWithOwner> {
  const row = await repo.findVisibleSegment(db, caller.websiteId, segmentId, caller.accountId);
  if (!row) throw notFound('Segment not found');
  if (!mayEdit(caller, row)) throw forbidden("Only its author or the website's owner may change a shared segment");
  return row;
}

export async function updateSegment(db: Kysely<Database>, caller: SegmentCaller, segmentId: string, input: UpdateSegmentInput): Promise<SegmentView> {
  await editable(db, caller, segmentId);
  if (input.shared === true && !mayShare(caller)) throw forbidden('Only the owner and members of a website may share a segment with its team');
  const changes: Parameters<typeof repo.updateSegment>[3] = { updated_at: new Date().toISOString() };
  if (input.name !== undefined) changes.name = nameOf(input.name);
  if (input.filters !== undefined) changes.filters = checkedFilters(input.filters);
  if (input.shared !== undefined) changes.shared = input.shared;
  await repo.updateSegment(db, caller.websiteId, segmentId, changes);
  return present(caller, (await repo.findVisibleSegment(db, caller.websiteId, segmentId, caller.accountId))!);
}

export async function deleteSegment(db: Kysely<Database>, caller: SegmentCaller, segmentId: string) {
  await editable(db, caller, segmentId);
  await repo.deleteSegment(db, caller.websiteId, segmentId);
  return { message: 'Segment deleted' };
}
