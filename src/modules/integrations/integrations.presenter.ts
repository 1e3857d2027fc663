import { PROVIDERS, RESYNC_PROVIDER } from './providers.ts';
import type { JobRow } from './integrations.repository.ts';

// Connection status only: no credential, and no part of one, ever reaches this shape.

export interface ResyncView {
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  requestedAt: string;
  finishedAt: string | null;
  error: string | null;
}

export function presentJob(job: JobRow): ResyncView {
  return { status: job.status as ResyncView['status'], requestedAt: job.requested_at, finishedAt: job.finished_at, error: job.error };
}

export function presentResync(job: JobRow | undefined): ResyncView | null {
  return job ? presentJob(job) : null;
}

export function presentStatus(connectedAt: Map<string, string>, resync: ResyncView | null) {
  const status: Record<string, { connected: boolean; connectedAt: string | null; resync?: ResyncView | null }> = {};
  for (const provider of PROVIDERS) {
    const at = connectedAt.get(provider) ?? null;
    status[provider] = { connected: at !== null, connectedAt: at };
    if (provider === RESYNC_PROVIDER) status[provider].resync = at === null ? null : resync;
  }
  return status;
}
