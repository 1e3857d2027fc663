import { type Kysely, sql } from 'kysely';

/**
 * The visitors whose attributes varied, newest first: the visitor list filtered on visitor
 * attributes walks them in that order and stops at the page's end
 * (src/modules/stats/sql/visitor-list-varied.ts) instead of grouping every event of theirs. A
 * partial index beside visitor_totals_varied_idx: it holds only the varied visitors' rows, so
 * ingestion writes it only for them. Nothing to build: it indexes rows that exist.
 */
export function variedVisitorsRecent() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('visitor_totals_varied_recent_idx')
        .on('visitor_totals')
        .columns(['website_id', 'last_at desc', 'visitor_id'])
        .where(sql<boolean>`varied <> 0`)
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('visitor_totals_varied_recent_idx').execute();
    },
  };
}
