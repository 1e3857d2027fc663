import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type Db, poolStats } from '../db/database.ts';
import type { DropReason } from '../modules/events/ingest.filters.ts';

// The metrics of one app, in a registry of its own (tests build many apps in one process), plus
// the process metrics (CPU, memory, event loop, GC), which belong to the process and are kept
// in one registry shared by every app. Every label value comes from a closed set or a route's
// URL template, never from the raw URL: no ids, no credentials, and a bounded series count.

export const PREFIX = 'sightline_';

/** Where an accepted event came from. */
export type EventSource = 'browser' | 'server_goal' | 'payment';
const EVENT_SOURCES: EventSource[] = ['browser', 'server_goal', 'payment'];

// A Record, so a new DropReason fails to compile until it is listed (its series starts at 0).
const DROP_REASONS: Record<DropReason, true> = {
  bot: true,
  'excluded-ip': true,
  'excluded-country': true,
  'excluded-hostname': true,
  'hostname-not-allowed': true,
  'excluded-path': true,
};

const OUTBOX_STATUSES = ['pending', 'failed'] as const;
const JOB_STATUSES = ['queued', 'running', 'failed'] as const;
/** The providers whose payment history is imported (integrations/providers.ts API_PROVIDERS). */
const IMPORT_PROVIDERS = ['provider-one', 'provider-two', 'provider-three', 'provider-four'] as const;

// Most API answers take well under 10 ms; analytics reads and bulk writes take longer.
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let processRegistry: Registry | null = null;

/** CPU, memory, event loop lag, GC and handles of this process, collected at scrape time. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: PREFIX });
  }
  return processRegistry;
}

/** What the database holds for the gauges read at scrape time. */
export interface DatabaseReadings {
  outbox: Partial<Record<(typeof OUTBOX_STATUSES)[number], number>>;
  oldestPendingMailAgeSeconds: number;
  jobs: Partial<Record<(typeof JOB_STATUSES)[number], number>>;
  rollupBacklog: number;
  /** Websites whose day rollups move to a new time zone, and their visitors not moved yet (known once counted). */
  relocations: { websites: number; visitorsLeft: number };
  /** Websites whose derived tables are being built, and their events not derived yet (known once counted). */
  derivedBuilds: { websites: number; eventsLeft: number };
  /** Stored funnels whose own tables are being built, and their visitors not derived yet (known once counted). */
  funnelBuilds: { funnels: number; visitorsLeft: number };
}

export class AppMetrics {
  /** Always answered, database or not. */
  readonly registry = new Registry();
  /** Gauges read from the database; left out of a scrape when it does not answer. */
  private readonly databaseRegistry = new Registry();

  readonly httpDuration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time to answer HTTP requests, by method, route template (or "unmatched") and status code; _count counts requests.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly analyticsReadWait = new Histogram({
    name: `${PREFIX}analytics_read_wait_seconds`,
    help: 'Time analytics reads waited for a read slot (src/plugins/analytics-reads.ts), by route template: near zero, or a queue when reads arrive faster than they are served.',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly analyticsReadService = new Histogram({
    name: `${PREFIX}analytics_read_service_seconds`,
    help: 'Time analytics reads held their read slot (their own work, without the queue), by route template: what decides how many reads per second an instance serves.',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly eventsAccepted = new Counter({
    name: `${PREFIX}events_accepted_total`,
    help: 'Events accepted, by source: browser (POST /api/events), server_goal (POST /api/v1/goals), payment (POST /api/v1/payments).',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly eventsDropped = new Counter({
    name: `${PREFIX}events_dropped_total`,
    help: 'Browser events answered 200 but not stored, by the reason given in X-Sightline-Dropped.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly integrationPaymentsImported = new Counter({
    name: `${PREFIX}integration_payments_imported_total`,
    help: "Payments read from a provider's history by this instance's integration jobs and handed to the payment writer (which records each transaction once), by provider.",
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly integrationWebhooks = new Counter({
    name: `${PREFIX}integration_webhooks_total`,
    help: 'Deliveries to the payment providers\' webhook receiver, by provider and outcome: recorded, duplicate (an event already received), ping, bad_signature (400, nothing stored) or not_connected (410).',
    labelNames: ['provider', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly databaseUp = new Gauge({
    name: `${PREFIX}database_up`,
    help: 'Whether the database answered the queries of this scrape (1) or not (0).',
    registers: [this.registry],
  });

  private readonly outboxMessages = new Gauge({
    name: `${PREFIX}mail_outbox_messages`,
    help: 'Alert e-mails in the outbox: pending (waiting or retrying) and failed (attempts exhausted).',
    labelNames: ['status'] as const,
    registers: [this.databaseRegistry],
  });

  private readonly oldestPendingMail = new Gauge({
    name: `${PREFIX}mail_outbox_oldest_pending_age_seconds`,
    help: 'Age of the oldest pending alert e-mail (0 when none is pending); grows while delivery is failing.',
    registers: [this.databaseRegistry],
  });

  private readonly integrationJobs = new Gauge({
    name: `${PREFIX}integration_jobs`,
    help: 'Integration jobs (checking a credential and importing its payment history, on connect and re-sync): waiting or retrying (queued), in progress (running), given up or cancelled (failed).',
    labelNames: ['status'] as const,
    registers: [this.databaseRegistry],
  });

  private readonly rollupBacklog = new Gauge({
    name: `${PREFIX}rollup_backlog_events`,
    help: 'Accepted events (and payment changes) whose rollups are not derived yet (rollup_backlog): near zero, or a few seconds of ingestion under load; one that keeps growing means derivation fails or falls behind.',
    registers: [this.databaseRegistry],
  });

  private readonly relocations = new Gauge({
    name: `${PREFIX}rollup_relocations`,
    help: "Websites whose day rollups are moving to a new time zone in the background (their reads use the raw events meanwhile); zero when none.",
    registers: [this.databaseRegistry],
  });

  private readonly relocationVisitors = new Gauge({
    name: `${PREFIX}rollup_relocation_visitors_remaining`,
    help: 'Visitors whose day rollups have still to move to their website\'s new time zone: falls to zero as the moves run.',
    registers: [this.databaseRegistry],
  });

  private readonly derivedBuilds = new Gauge({
    name: `${PREFIX}derived_builds`,
    help: 'Websites whose derived tables are being built again from the raw events in the background, after an upgrade that added one or an operator\'s rebuild (their reads use the raw events meanwhile); zero when none.',
    registers: [this.databaseRegistry],
  });

  private readonly derivedBuildEvents = new Gauge({
    name: `${PREFIX}derived_build_events_remaining`,
    help: 'Events still to derive by the builds under way: falls to zero as they run.',
    registers: [this.databaseRegistry],
  });

  private readonly funnelBuilds = new Gauge({
    name: `${PREFIX}funnel_builds`,
    help: 'Stored funnels, created or given other steps on a website with events, whose own tables are being built from the raw events in the background (their reports read the raw events meanwhile); zero when none.',
    registers: [this.databaseRegistry],
  });

  private readonly funnelBuildVisitors = new Gauge({
    name: `${PREFIX}funnel_build_visitors_remaining`,
    help: 'Visitors with step events still to derive by the funnel builds under way: falls to zero as they run.',
    registers: [this.databaseRegistry],
  });

  constructor(db: Db) {
    for (const source of EVENT_SOURCES) this.eventsAccepted.inc({ source }, 0);
    for (const reason of Object.keys(DROP_REASONS)) this.eventsDropped.inc({ reason }, 0);
    for (const provider of IMPORT_PROVIDERS) this.integrationPaymentsImported.inc({ provider }, 0);
    if (poolStats(db)) this.registerPoolGauges(db);
  }

  /** Connection pool use, read from the pool at scrape time (PostgreSQL only). */
  private registerPoolGauges(db: Db): void {
    const gauge = (name: string, help: string, read: (stats: NonNullable<ReturnType<typeof poolStats>>) => number) =>
      new Gauge({
        name: `${PREFIX}database_pool_${name}`,
        help,
        registers: [this.registry],
        collect() {
          const stats = poolStats(db);
          if (stats) this.set(read(stats));
        },
      });
    gauge('connections', 'Open PostgreSQL connections, idle or in use.', (s) => s.total);
    gauge('idle_connections', 'Open PostgreSQL connections not in use.', (s) => s.idle);
    gauge('waiting_queries', 'Queries waiting for a free PostgreSQL connection.', (s) => s.waiting);
    gauge('max_connections', 'The most PostgreSQL connections the pool opens.', (s) => s.max);
  }

  /** The text of one scrape; the database gauges only when `readings` is not null. */
  async scrape(readings: DatabaseReadings | null): Promise<string> {
    this.databaseUp.set(readings ? 1 : 0);
    const registries = [processMetrics(), this.registry];
    if (readings) {
      for (const status of OUTBOX_STATUSES) this.outboxMessages.set({ status }, readings.outbox[status] ?? 0);
      this.oldestPendingMail.set(readings.oldestPendingMailAgeSeconds);
      for (const status of JOB_STATUSES) this.integrationJobs.set({ status }, readings.jobs[status] ?? 0);
      this.rollupBacklog.set(readings.rollupBacklog);
      this.relocations.set(readings.relocations.websites);
      this.relocationVisitors.set(readings.relocations.visitorsLeft);
      this.derivedBuilds.set(readings.derivedBuilds.websites);
      this.derivedBuildEvents.set(readings.derivedBuilds.eventsLeft);
      this.funnelBuilds.set(readings.funnelBuilds.funnels);
      this.funnelBuildVisitors.set(readings.funnelBuilds.visitorsLeft);
      registries.push(this.databaseRegistry);
    }
    return Registry.merge(registries).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
