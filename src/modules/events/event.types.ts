// The raw event's types live with the records (src/db/event-records.ts), so that the analytics
// module, which the events module's writers call, never imports this module back.
export { type EventDetails, type NewEvent, type RecordedEvent, isGoal } from '../../db/event-records.ts';

/** What the side effects of recording need from the configuration. */
export interface EventEffectsConfig {
  alertCooldownSeconds: number;
  /** False when SMTP_URL is unset: alert deliveries are recorded as skipped. */
  mailEnabled: boolean;
  /** CLICKHOUSE_URL is set: raw events are queued for ClickHouse instead of stored here. */
  eventsInClickHouse?: boolean;
}
