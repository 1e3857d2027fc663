import type { Kysely } from 'kysely';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { conflict, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { buildSteps, uniqueSlug } from './funnel-steps.ts';
import { presentFunnel } from './funnels.presenter.ts';
import * as repo from './funnels.repository.ts';
import type { CreateFunnelInput, UpdateFunnelInput } from './funnels.schemas.ts';

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
      return presentFunnel(next);
    }),
  );
}

export async function deleteFunnel(db: Kysely<Database>, websiteId: string, funnelId: string) {
  if (!(await repo.deactivateFunnel(db, websiteId, funnelId, new Date().toISOString()))) throw notFound('Funnel not found');
  return { message: 'Funnel deleted' };
}
