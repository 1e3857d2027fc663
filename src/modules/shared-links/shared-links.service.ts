import type { Kysely, Updateable } from 'kysely';
import { hashPassword } from '../../auth/passwords.ts';
import { lockWebsite } from '../../db/locks.ts';
import type { Database, SharedLinksTable } from '../../db/schema.ts';
import { badRequest, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { presentSharedLink } from './shared-links.presenter.ts';
import * as repo from './shared-links.repository.ts';
import { type CreateSharedLinkInput, MAX_SHARED_LINKS_PER_WEBSITE, type UpdateSharedLinkInput } from './shared-links.schemas.ts';
import { digestSlug, displaySlug, generateSlug } from './share-secrets.ts';

export async function listSharedLinks(db: Kysely<Database>, websiteId: string) {
  return (await repo.listActiveLinks(db, websiteId)).map(presentSharedLink);
}

export function sharedDashboardUrl(publicUrl: string, slug: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/share/${slug}`;
}

/** The raw slug and URL are in this answer only. The password is hashed before the transaction. */
export async function createSharedLink(db: Kysely<Database>, websiteId: string, input: CreateSharedLinkInput, publicUrl: string) {
  const slug = generateSlug();
  const now = new Date().toISOString();
  const row: repo.SharedLinkRow = {
    id: newId(),
    website_id: websiteId,
    name: input.name,
    digest: digestSlug(slug),
    display_slug: displaySlug(slug),
    password_hash: input.password === undefined ? null : await hashPassword(input.password),
    created_at: now,
    updated_at: now,
    revoked_at: null,
  };
  await db.transaction().execute(async (trx) => {
    await lockWebsite(trx, websiteId);
    if ((await repo.countActiveLinks(trx, websiteId)) >= MAX_SHARED_LINKS_PER_WEBSITE) {
      throw badRequest(`Shared link limit reached: a website may have at most ${MAX_SHARED_LINKS_PER_WEBSITE} links; revoke one first`);
    }
    await repo.insertLink(trx, row);
  });
  return { ...presentSharedLink(row), slug, url: sharedDashboardUrl(publicUrl, slug) };
}

/** Renames, sets or clears (null) the password; a new or cleared password ends every earlier unlock. */
export async function updateSharedLink(db: Kysely<Database>, websiteId: string, linkId: string, input: UpdateSharedLinkInput) {
  if (!(await repo.findActiveLink(db, websiteId, linkId))) throw notFound('Shared link not found');
  const changes: Updateable<SharedLinksTable> = { updated_at: new Date().toISOString() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.password !== undefined) changes.password_hash = input.password === null ? null : await hashPassword(input.password);
  if (!(await repo.updateLink(db, websiteId, linkId, changes))) throw notFound('Shared link not found');
  const row = await repo.findActiveLink(db, websiteId, linkId);
  if (!row) throw notFound('Shared link not found');
  return presentSharedLink(row);
}

/** Revoking is final: the URL answers 404 from the next request on, unlocked or not. */
export async function revokeSharedLink(db: Kysely<Database>, websiteId: string, linkId: string) {
  const now = new Date().toISOString();
  if (!(await repo.updateLink(db, websiteId, linkId, { revoked_at: now, updated_at: now }))) throw notFound('Shared link not found');
  return { revoked: true };
}
