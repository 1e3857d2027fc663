import { HOSTED_NAMES, PROVIDERS, type Provider, RESYNC_PROVIDER, isApiProvider } from './providers.ts';
import type { JobRow, listIntegrations } from './integrations.repository.ts';

// Connection status only: no credential, and no part of one, ever reaches this shape. The errors
// shown are the provider's answers as the adapters word them, scrubbed of the credential.

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

/** The credential's check: verifying until the provider has answered. */
export interface AccountView {
  status: 'verifying' | 'verified' | 'failed';
  name: string | null;
  currency: string | null;
  error: string | null;
  verifiedAt: string | null;
}

/** The payment history import of the current connection, with its progress. */
export interface HistoryView extends ResyncView {
  pages: number;
  paymentsImported: number;
  attempts: number;
}

type IntegrationListing = Awaited<ReturnType<typeof listIntegrations>>[number];

function presentAccount(row: IntegrationListing): AccountView {
  const status = row.verification_error !== null ? 'failed' : row.verified_at !== null ? 'verified' : 'verifying';
  return { status, name: row.account_name, currency: row.account_currency, error: row.verification_error, verifiedAt: row.verified_at };
}

function presentHistory(job: JobRow | undefined): HistoryView | null {
  if (!job) return null;
  return { ...presentJob(job), pages: job.pages_done, paymentsImported: job.payments_imported, attempts: job.attempts };
}

/** Where the provider posts its events, and what arrived; the secret itself never. */
export interface WebhookView {
  url: string;
  secretSet: boolean;
  secretSetAt: string | null;
  lastEventAt: string | null;
  lastEventType: string | null;
  eventsReceived: number;
}

function presentWebhook(row: IntegrationListing | undefined, url: string): WebhookView {
  return {
    url,
    secretSet: row?.webhook_secret_set_at != null,
    secretSetAt: row?.webhook_secret_set_at ?? null,
    lastEventAt: row?.last_webhook_at ?? null,
    lastEventType: row?.last_webhook_type ?? null,
    eventsReceived: Number(row?.webhooks_received ?? 0),
  };
}

export interface ProviderStatus {
  connected: boolean;
  connectedAt: string | null;
  webhook: WebhookView;
  account?: AccountView | null;
  history?: HistoryView | null;
  resync?: ResyncView | null;
  keyExpiresAt?: null;
}

/** Each provider under its own name and under the hosted service's name, and the website's currency. */
export function presentStatus(rows: IntegrationListing[], jobs: Map<string, JobRow | undefined>, currency: string, webhookUrlOf: (provider: Provider) => string) {
  const byProvider = new Map(rows.map((row) => [row.provider, row]));
  const status: Record<string, ProviderStatus> = {};
  for (const provider of PROVIDERS) {
    const row = byProvider.get(provider);
    status[provider] = { connected: row !== undefined, connectedAt: row?.connected_at ?? null, webhook: presentWebhook(row, webhookUrlOf(provider)) };
    if (isApiProvider(provider)) {
      const job = row ? jobs.get(provider) : undefined;
      status[provider] = { ...status[provider], account: row ? presentAccount(row) : null, history: presentHistory(job) };
      if (provider === RESYNC_PROVIDER) status[provider] = { ...status[provider], resync: presentResync(job), keyExpiresAt: null };
    }
  }
  for (const provider of PROVIDERS) status[HOSTED_NAMES[provider]] = status[provider]!;
  return { ...status, currency } as Record<Provider, ProviderStatus> & { currency: string };
}
