import { HOSTED_NAMES, PROVIDERS, RESYNC_PROVIDER } from './providers.ts';
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

interface ProviderStatus {
  connected: boolean;
  connectedAt: string | null;
  resync?: ResyncView | null;
  keyExpiresAt?: null;
}

/** Each provider under its own name and under the hosted service's name, and the website's currency. */
export function presentStatus(connectedAt: Map<string, string>, resync: ResyncView | null, currency: string) {
  const status: Record<string, ProviderStatus> = {};
  for (const provider of PROVIDERS) {
    const at = connectedAt.get(provider) ?? null;
    status[provider] = { connected: at !== null, connectedAt: at };
    if (provider === RESYNC_PROVIDER) status[provider] = { ...status[provider], resync: at === null ? null : resync, keyExpiresAt: null };
  }
  for (const provider of PROVIDERS) status[HOSTED_NAMES[provider]] = status[provider]!;
  return { ...status, currency };
}
