import type { ImportRow } from './imports.repository.ts';
import type { ImportViewType } from './imports.schemas.ts';

type Common = 'id' | 'websiteId' | 'status' | 'firstDay' | 'lastDay' | 'error' | 'uploadBytes' | 'createdBy' | 'createdAt' | 'updatedAt' | 'finishedAt';

/** What every import answers alike: its ids, status, days, error, size, author and instants. */
export function presentedCommon(row: ImportRow): Pick<ImportViewType, Common> {
  return {
    id: row.id,
    websiteId: row.website_id,
    status: row.status as ImportViewType['status'],
    firstDay: row.first_day,
    lastDay: row.last_day,
    error: row.error,
    uploadBytes: row.upload_bytes,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}
