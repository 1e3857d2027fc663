import type { Kysely, Selectable } from 'kysely';
import type { Database, FunnelsTable } from '../../db/schema.ts';
import type { FunnelStepView } from './funnels.schemas.ts';

export type FunnelRow = Selectable<FunnelsTable>;

/** A funnel as both engines return it: steps parsed, is_active a real boolean. */
export interface Funnel {
  id: string;
  website_id: string;
  name: string;
  slug: string;
  steps: FunnelStepView[];
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

/** The partial unique index on (website_id, lower(name)) among active funnels. */
const ACTIVE_NAME_INDEX = 'funnels_active_name';

function toFunnel(row: FunnelRow): Funnel {
  return { ...row, steps: JSON.parse(row.steps) as FunnelStepView[], is_active: Boolean(row.is_active) };
}

function toRow(funnel: Funnel) {
  return { ...funnel, steps: JSON.stringify(funnel.steps) };
}

const ofWebsite = (db: Kysely<Database>, websiteId: string) => db.selectFrom('funnels').where('website_id', '=', websiteId);

export async function listActiveFunnels(db: Kysely<Database>, websiteId: string): Promise<Funnel[]> {
  const rows = await ofWebsite(db, websiteId).selectAll().where('is_active', '=', true).orderBy('created_at').orderBy('id').execute();
  return rows.map(toFunnel);
}

/** Active or not: PUT edits and revives deleted funnels. */
export async function findFunnel(db: Kysely<Database>, websiteId: string, funnelId: string): Promise<Funnel | undefined> {
  const row = await ofWebsite(db, websiteId).selectAll().where('id', '=', funnelId).executeTakeFirst();
  return row && toFunnel(row);
}

/** The name of an active funnel (other than `exceptId`) named `name`, case-insensitively. */
export async function findActiveNameClash(
  db: Kysely<Database>,
  websiteId: string,
  name: string,
  exceptId?: string,
): Promise<string | undefined> {
  let query = ofWebsite(db, websiteId)
    .select('name')
    .where('is_active', '=', true)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', eb.fn('lower', [eb.val(name)])));
  if (exceptId) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst())?.name;
}

export async function activeSlugs(db: Kysely<Database>, websiteId: string, exceptId?: string): Promise<Set<string>> {
  let query = ofWebsite(db, websiteId).select('slug').where('is_active', '=', true);
  if (exceptId) query = query.where('id', '!=', exceptId);
  return new Set((await query.execute()).map((row) => row.slug));
}

export async function insertFunnel(db: Kysely<Database>, funnel: Funnel): Promise<void> {
  await db.insertInto('funnels').values(toRow(funnel)).execute();
}

export async function updateFunnel(db: Kysely<Database>, funnel: Funnel): Promise<void> {
  const { id, website_id, created_at, ...changes } = toRow(funnel); // eslint-disable-line @typescript-eslint/no-unused-vars
  await db.updateTable('funnels').set(changes).where('id', '=', id).where('website_id', '=', website_id).execute();
}

export async function deactivateFunnel(db: Kysely<Database>, websiteId: string, funnelId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('funnels')
    .set({ is_active: false, updated_at: at })
    .where('id', '=', funnelId)
    .where('website_id', '=', websiteId)
    .where('is_active', '=', true)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Whether a write lost a race for an active name: the unique index refused it, on either engine. */
export function isActiveNameViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (code === '23505') return constraint === ACTIVE_NAME_INDEX; // PostgreSQL unique_violation
  return code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string' && message.includes(ACTIVE_NAME_INDEX);
}
