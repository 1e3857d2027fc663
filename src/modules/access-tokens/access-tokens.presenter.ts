import type { AccessTokenView } from './access-tokens.schemas.ts';
import type { AccessTokenRow } from './access-tokens.repository.ts';

export function presentAccessToken(row: AccessTokenRow): AccessTokenView {
  return {
    id: row.id,
    _id: row.id,
    name: row.name,
    displayKey: row.display_key,
    permissions: JSON.parse(row.permissions) as string[],
    websiteIds: JSON.parse(row.website_ids) as string[],
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
  };
}
