import type { SegmentWithOwner } from './segments.repository.ts';
import type { SegmentView } from './segments.schemas.ts';

export function presentSegment(row: SegmentWithOwner, canEdit: boolean): SegmentView {
  return {
    id: row.id,
    _id: row.id,
    websiteId: row.website_id,
    name: row.name,
    filters: JSON.parse(row.filters) as Record<string, string>,
    shared: Boolean(row.shared),
    owner: { id: row.owner_id, name: row.owner_name },
    canEdit,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
