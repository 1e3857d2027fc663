import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { PropertyRow, RowsPage } from '../event-store.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { num, pageTotal, scopeCondition } from './scope-sql.ts';

// A custom goal's metadata, value by value: its properties are a JSON object of strings in
// events.metadata, expanded with json_each (SQLite) or jsonb_each_text (PostgreSQL).

export async function goalProperties(
  db: Kysely<Database>,
  scope: StatsScope,
  eventName: string,
  propertyName: string | null,
  page: PageRequest,
): Promise<RowsPage<PropertyRow>> {
  const expand = isPostgres(db) ? sql`cross join lateral jsonb_each_text(e.metadata::jsonb) as j(key, value)` : sql`cross join json_each(e.metadata) as j`;
  const property = propertyName === null ? sql`` : sql`and j.key = ${propertyName}`;
  const where = sql`${scopeCondition(scope)} and e.type = 'custom' and e.name = ${eventName} and e.metadata is not null ${property}`;
  const found = await sql<Record<string, unknown>>`
    select j.key as property, j.value as value, count(*) as completions, count(distinct e.visitor_id) as visitors,
      count(*) over () as total_rows
    from events e ${expand} where ${where}
    group by j.key, j.value
    order by completions desc, visitors desc, j.key, j.value
    limit ${page.limit} offset ${page.offset}`.execute(db);
  const total = await pageTotal(found.rows, page, async () => {
    const { rows } = await sql<{ n: unknown }>`select count(*) as n from (select 1 as one from events e ${expand} where ${where} group by j.key, j.value) g`.execute(db);
    return rows[0]?.n;
  });
  return {
    rows: found.rows.map((row) => ({
      property: String(row.property),
      value: row.value === null || row.value === undefined ? null : String(row.value),
      completions: num(row.completions),
      visitors: num(row.visitors),
    })),
    total,
  };
}
