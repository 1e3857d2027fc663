import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';

/**
 * With CLICKHOUSE_URL set, an accepted event is first committed here, in the transaction that
 * answers the request, and then shipped to ClickHouse by the relay
 * (src/modules/events/clickhouse-relay.ts), which deletes it once ClickHouse holds it. `seq`
 * orders the shipping; `batch` names the shipment a row was claimed for, so a shipment cut short
 * by a crash is finished, not repeated.
 */
export function eventRelay(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') {
        await sql`CREATE TABLE event_relay (
          seq bigserial PRIMARY KEY,
          website_id text NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
          batch text,
          row text NOT NULL
        )`.execute(db);
      } else {
        await sql`CREATE TABLE event_relay (
          seq integer PRIMARY KEY AUTOINCREMENT,
          website_id text NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
          batch text,
          row text NOT NULL
        )`.execute(db);
      }
      await db.schema.createIndex('event_relay_batch_idx').on('event_relay').column('batch').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('event_relay').execute();
    },
  };
}
