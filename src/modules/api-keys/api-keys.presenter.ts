import type { ApiKeyView } from './api-keys.schemas.ts';
import type { ApiKeyRow } from './api-keys.repository.ts';

export function presentApiKey(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    _id: row.id,
    websiteId: row.website_id,
    name: row.name,
    displayKey: row.display_key,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
  };
}
