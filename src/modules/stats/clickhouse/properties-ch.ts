import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { PropertyRow, RowsPage } from '../event-store.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { num, scopeCondition } from './scope-ch.ts';

// A custom goal's metadata, value by value, as ../sql/properties-sql.ts: its properties are a
// JSON object of strings in events.metadata (written by JSON.stringify). This ClickHouse has no
// JSON functions that list an object's members, so the members are cut out with a regular
// expression over the JSON text (a string literal is quotes around anything but a quote or a
// backslash, or an escape), and each key and value literal is decoded by the JSON string parser
// of visitParamExtractString.

/** A JSON string literal, escapes included. */
const STRING = '"(?:[^"\\\\]|\\\\.)*"';
/** One `"key":"value"` member. */
const MEMBER = `${STRING}:${STRING}`;
/** The key literal at the start of a member. */
const KEY = `^(${STRING}):`;

/** The text a JSON string literal stands for. */
const decoded = (literal: RawBuilder<unknown>) => sql`visitParamExtractString(concat('{"k":', ${literal}, '}'), 'k')`;

export async function goalProperties(
  ch: ClickHouse,
  scope: StatsScope,
  eventName: string,
  propertyName: string | null,
  page: PageRequest,
): Promise<RowsPage<PropertyRow>> {
  // One row per member of each completion's metadata: its visitor, key and value.
  const members = sql`(
    select visitor_id, extract(member, ${KEY}) as key_literal,
      ${decoded(sql`key_literal`)} as property,
      ${decoded(sql`substring(member, length(key_literal) + 2)`)} as property_value
    from events array join extractAll(ifNull(metadata, ''), ${MEMBER}) as member
    where ${scopeCondition(scope)} and type = 'custom' and name = ${eventName} and isNotNull(metadata))`;
  const where = propertyName === null ? sql`1 = 1` : sql`property = ${propertyName}`;
  const found = await ch.rows<Record<string, unknown>>(sql`
    select property, property_value, count() as completions, uniq(visitor_id) as visitor_count
    from ${members} where ${where}
    group by property, property_value
    order by completions desc, visitor_count desc, property, property_value
    limit ${page.limit} offset ${page.offset}`);
  // The total needs its own count only when this page does not show where the rows end.
  const ended = found.length < page.limit && (found.length > 0 || page.offset === 0);
  const total = ended
    ? page.offset + found.length
    : num((await ch.rows<{ n: unknown }>(sql`select count() as n from (select property, property_value from ${members} where ${where} group by property, property_value)`))[0]?.n);
  return {
    rows: found.map((row) => ({
      property: String(row.property),
      value: row.property_value === null || row.property_value === undefined ? null : String(row.property_value),
      completions: num(row.completions),
      visitors: num(row.visitor_count),
    })),
    total,
  };
}
