import type { Kysely } from 'kysely';

/**
 * Covering indexes for a funnel's steps, which the report reads over 30 days by default: a page
 * step reads the page views of its path per visitor with their times (new), a goal step the
 * completions of its goal in the range with their visitors (the goal index gains the visitor, so
 * neither reads the events table itself).
 */
export function funnelIndexes() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('events_website_page_idx').on('events').columns(['website_id', 'type', 'path', 'visitor_id', 'occurred_at']).execute();
      await db.schema.dropIndex('events_website_goal_idx').execute();
      await db.schema.createIndex('events_website_goal_idx').on('events').columns(['website_id', 'type', 'name', 'occurred_at', 'visitor_id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_website_goal_idx').execute();
      await db.schema.createIndex('events_website_goal_idx').on('events').columns(['website_id', 'type', 'name', 'occurred_at']).execute();
      await db.schema.dropIndex('events_website_page_idx').execute();
    },
  };
}
