import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * A build's cursor becomes an event, not a visitor (src/modules/analytics/derived-build.ts): a
 * chunk may stop inside a visitor with many events, so no chunk is longer than its share of
 * events. derived_builds gains the instant and id of the last event derived, and the events'
 * visitor index orders each visitor's events by time (website, visitor, instant, id), which the
 * build walks and which the lookups of a visitor's latest or first event read from the top.
 * Builds under way start again from their clear phase: their cursor named whole visitors.
 */
export function buildEventCursor(engine: Engine) {
  const { timestamp } = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('derived_builds').addColumn('cursor_at', timestamp).execute();
      await db.schema.alterTable('derived_builds').addColumn('cursor_event_id', 'text').execute();
      await sql`update derived_builds set phase = 'clear', cursor = null, visitors_done = 0, events_done = 0, events_total = null where phase = 'derive'`.execute(db);
      await db.schema.dropIndex('events_website_visitor_idx').execute();
      await db.schema.createIndex('events_website_visitor_idx').on('events').columns(['website_id', 'visitor_id', 'occurred_at', 'id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`update derived_builds set phase = 'clear', cursor = null, visitors_done = 0, events_done = 0, events_total = null where phase = 'derive'`.execute(db);
      await db.schema.dropIndex('events_website_visitor_idx').execute();
      await db.schema.createIndex('events_website_visitor_idx').on('events').columns(['website_id', 'visitor_id', 'type']).execute();
      await db.schema.alterTable('derived_builds').dropColumn('cursor_event_id').execute();
      await db.schema.alterTable('derived_builds').dropColumn('cursor_at').execute();
    },
  };
}
