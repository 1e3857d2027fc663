import type { Kysely } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import { eventsHaveSessionAttributes } from '../../events/clickhouse-session-attributes.ts';
import { sessionsTableReady } from '../../events/clickhouse-session-fill.ts';
import type { EventStore } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import type { ClickHouseScope, SessionSource } from './scope-ch.ts';
import { breakdown } from './breakdowns-ch.ts';
import { funnel } from './funnel-ch.ts';
import { liveMap, liveVisitors } from './live-ch.ts';
import { overview } from './overview-ch.ts';
import { DEFAULT_SAMPLE_THRESHOLD, sampleRateFor } from './sampling-ch.ts';
import { goalProperties } from './properties-ch.ts';
import * as series from './series-ch.ts';
import { visitor, visitors } from './visitors-ch.ts';

export interface ClickHouseStoreOptions {
  /** CLICKHOUSE_SAMPLE_THRESHOLD: events in a range above which its raw reads sample; 0 or null: never. */
  sampleThreshold?: number | null;
}

/**
 * The event store on ClickHouse: raw events there, payments and visitor profiles on the
 * relational side (`db`). `settle` resolves once this process's accepted events have reached
 * ClickHouse (the relay), so every read sees what was acknowledged before it.
 *
 * Distinct visitors and sessions are counted with `uniq`, as Plausible does: exact up to 65,536
 * values, an estimate within about 1 % beyond, the same whatever the order of the rows, and its
 * partial states merge to the whole's count (so the overview equals the time series' total).
 * `uniqExact` cost 3 to 4 times as much at 10 million events. The visitor list's total, which
 * a client pages through, and the goal statistics, which the relational side keeps exact
 * (src/modules/events/clickhouse-event-log.ts), stay exact.
 */
export function clickhouseEventStore(ch: ClickHouse, db: Kysely<Database>, settle: () => Promise<void>, options: ClickHouseStoreOptions = {}): EventStore {
  const threshold = options.sampleThreshold === undefined ? DEFAULT_SAMPLE_THRESHOLD : options.sampleThreshold;
  // Once the sessions table is filled it stays so: asked until then, remembered after.
  let source: SessionSource = 'events';
  // Likewise once the events carry their sessions' attributes (the upgrade's copy is switched in).
  let attributes = false;
  const settled =
    <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await settle();
      if (source === 'events' && (await sessionsTableReady(ch))) source = 'table';
      if (!attributes && source === 'table') attributes = await eventsHaveSessionAttributes(ch);
      return read(...args);
    };
  /** The scope with where its sessions come from. */
  const on = (scope: StatsScope): ClickHouseScope => ({ ...scope, sessions: source, attributes });
  /** The scope with its sessions' source and the rate its raw reads may sample at. */
  const sampledOn = async (scope: StatsScope): Promise<ClickHouseScope> => ({ ...on(scope), sample: await sampleRateFor(ch, scope, threshold) });
  return {
    settle: () => settle(),
    // Filtered series read raw events and sample like the filtered overview of the same range; unfiltered ones too (no rollup here), exact.
    spanTraffic: settled(async (scope, spans) => series.eventTraffic(ch, scope.filters.length > 0 ? await sampledOn(scope) : on(scope), spans)),
    dailyTotals: settled((websiteId, firstDay, lastDay) => series.dailyTotals(ch, db, websiteId, firstDay, lastDay)),
    spanDistinctVisitors: settled((websiteId, spans) => series.distinctVisitors(ch, db, websiteId, spans)),
    // The hour rollups are the relational store's: an hourly series here counts the raw events (spanTraffic).
    hourTraffic: async () => undefined,
    spanPayments: settled((scope, spans, money) => series.paymentTotals(ch, db, on(scope), spans, money)),
    // Only a filtered overview reads raw rows (the rollups answer the rest): only it may sample.
    overview: settled(async (scope, money) => overview(ch, db, scope.filters.length > 0 ? await sampledOn(scope) : on(scope), money)),
    breakdown: settled(async (kind, scope, page, money) => breakdown(ch, db, kind, await sampledOn(scope), page, money)),
    goalProperties: settled((scope, eventName, propertyName, page) => goalProperties(ch, on(scope), eventName, propertyName, page)),
    // The funnel and the visitor list's total scan raw events filtered or not: both may sample.
    funnel: settled(async (scope, steps, money) => funnel(ch, db, await sampledOn(scope), steps, money)),
    liveVisitors: settled((websiteId, since) => liveVisitors(ch, websiteId, since)),
    liveMap: settled((websiteId, since) => liveMap(ch, db, websiteId, since, source)),
    visitor: settled((websiteId, visitorId) => visitor(ch, db, websiteId, visitorId, source)),
    visitors: settled(async (scope, options, page) => visitors(ch, db, await sampledOn(scope), options, page)),
  };
}
