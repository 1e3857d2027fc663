import type { ImportRow } from './imports.repository.ts';
import type { ImportViewType } from './imports.schemas.ts';

/** What every import answers alike: its error, size, author and instants. */
export function presentedTimes(row: ImportRow): Pick<ImportViewType, 'error' | 'uploadBytes' | 'createdBy' | 'createdAt' | 'updatedAt' | 'finishedAt'> {
  return {
    error: row.error,
    uploadBytes: row.upload_bytes,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}
