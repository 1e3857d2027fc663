import type { Kysely } from 'kysely';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { conflict, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { matchedSteps, sameSteps } from '../analytics/funnel-steps-match.ts';
import { funnelDeleted, funnelRevived, funnelStepsChanged } from '../analytics/maintainer.ts';
import { buildSteps, uniqueSlug } from './funnel-steps.ts';
import { presentFunnel } from './funnels.presenter.ts';
import * as repo from './funnels.repository.ts';
import type { CreateFunnelInput, UpdateFunnelInput } from './funnels.schemas.ts';

/**
 * The website's derived tables keep stored funnels' crossings (analytics/funnel-crossings.ts): a
 * new funnel, or new steps, has none yet, so it is built alone in the background and its reports
 * read the raw events until its build ends (kept at once on a website without events:
 * maintainer.ts funnelStepsChanged; the route wakes the derived-data worker). Steps that match
 * the same events as before (ids kept, a URL spelt otherwise) change nothing; a funnel with a
 * wildcard step is never kept.
 */
async function keepForSteps(trx: Kysely<Database>, websiteId: string, funnelId: string, before: repo.Funnel['steps'] | null, after: repo.Funnel['steps']): Promise<void> {
  const next = matchedSteps(after);
  const previous = before && matchedSteps(before);
  if (next === null && previous === null) return;
  if (next !== null && previous != null && sameSteps(next, previous)) return;
  await funnelStepsChanged(trx, websiteId, [funnelId]);
}

const nameTaken = (name: string) =>
  conflict(`An active funnel of this website is already named "${name}" (names are compared case-insensitively)`);

async function assertNameFree(db: Kysely<Database>, websiteId: string, name: string, exceptId?: string): Promise<void> {
  const clash = await repo.findActiveNameClash(db, websiteId, name, exceptId);
  if (clash !== undefined) throw nameTaken(clash);
}

/** The check above races with a concurrent write; the unique index settles it, and that is a 409 too. */
async function guardActiveName<T>(nameOf: () => string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (repo.isActiveNameViolation(error)) throw nameTaken(nameOf());
    throw error;
  }
}

export async function listFunnels(db: Kysely<Database>, websiteId: string) {
  return (await repo.listActiveFunnels(db, websiteId)).map(presentFunnel);
}

export async function createFunnel(db: Kysely<Database>, websiteId: string, input: CreateFunnelInput) {
  const steps = buildSteps(input.steps, new Set());
  const now = new Date().toISOString();
  return guardActiveName(() => input.name, () =>
    db.transaction().execute(async (trx) => {
      // Names and slugs are checked then written: one writer per website at a time.
      await lockWebsite(trx, websiteId);
      await assertNameFree(trx, websiteId, input.name);
      const funnel: repo.Funnel = {
        id: newId(),
        website_id: websiteId,
        name: input.name,
        slug: uniqueSlug(input.name, await repo.activeSlugs(trx, websiteId)),
        steps,
        is_active: true,
        created_at: now,
        updated_at: now,
      };
      await repo.insertFunnel(trx, funnel);
      await keepForSteps(trx, websiteId, funnel.id, null, funnel.steps);
      return presentFunnel(funnel);
    }),
  );
}

/** Partial: only the fields sent change. Works on deleted funnels too; isActive: true revives one. */
export async function updateFunnel(db: Kysely<Database>, websiteId: string, funnelId: string, input: UpdateFunnelInput) {
  let name = input.name ?? '';
  return guardActiveName(() => name, () =>
    db.transaction().execute(async (trx) => {
      await lockWebsite(trx, websiteId);
      const current = await repo.findFunnel(trx, websiteId, funnelId);
      if (!current) throw notFound('Funnel not found');
      name = input.name ?? current.name;
      const next: repo.Funnel = {
        ...current,
        name,
        steps: input.steps ? buildSteps(input.steps, new Set(current.steps.map((step) => step.id))) : current.steps,
        is_active: input.isActive ?? current.is_active,
        updated_at: new Date().toISOString(),
      };
      if (next.is_active) await assertNameFree(trx, websiteId, next.name, funnelId);
      if (next.name !== current.name || (next.is_active && !current.is_active)) {
        next.slug = uniqueSlug(next.name, await repo.activeSlugs(trx, websiteId, funnelId), current.slug);
      }
      await repo.updateFunnel(trx, next);
      await keepForSteps(trx, websiteId, next.id, current.steps, next.steps);
      if (next.is_active && !current.is_active) await funnelRevived(trx, websiteId, next.id);
      return presentFunnel(next);
    }),
  );
}

export async function deleteFunnel(db: Kysely<Database>, websiteId: string, funnelId: string) {
  await db.transaction().execute(async (trx) => {
    // The website's lock, as a change of steps takes: a build's chunk of this funnel does not interleave.
    await lockWebsite(trx, websiteId);
    if (!(await repo.deactivateFunnel(trx, websiteId, funnelId, new Date().toISOString()))) throw notFound('Funnel not found');
    await funnelDeleted(trx, websiteId, funnelId);
  });
  return { message: 'Funnel deleted' };
}
