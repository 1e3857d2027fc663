import type { Limits } from '../../config.ts';
import type { AccountView } from './account.schemas.ts';
import type { AccountRow } from './account.repository.ts';

export function presentAccount(row: AccountRow, limits: Limits, websiteId?: string): AccountView {
  return {
    id: row.id,
    _id: row.id,
    name: row.name,
    email: row.email,
    plan: { name: row.plan, limits: { ...limits } },
    createdAt: row.created_at,
    ...(websiteId ? { websiteId } : {}),
  };
}
