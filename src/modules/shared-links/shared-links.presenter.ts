import type { SharedLinkRow } from './shared-links.repository.ts';
import type { SharedLinkView } from './shared-links.schemas.ts';

export function presentSharedLink(row: SharedLinkRow): SharedLinkView {
  return {
    id: row.id,
    _id: row.id,
    websiteId: row.website_id,
    name: row.name,
    displaySlug: row.display_slug,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
