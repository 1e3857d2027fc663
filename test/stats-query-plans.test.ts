import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/database.ts';
import { scopeCondition } from '../src/modules/stats/sql/scope-sql.ts';
import { DIMENSIONS, type Filter } from '../src/modules/stats/stats.filters.ts';
import { openTestDatabase } from './helpers/engines.ts';

// A filter on a session's dimension (referrer, entry page, campaign) or on a goal is a subquery.
// Correlated to the outer event (`s.website_id = e.website_id`), SQLite runs it again for every
// event in the range: a filtered overview over a few thousand events took minutes. The plan must
// show each subquery computed once ("LIST SUBQUERY"), never "CORRELATED".

const RANGE = { from: '2026-01-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' };

describe('the query plans of filtered reads (SQLite)', () => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const opened = await openTestDatabase('sqlite');
    db = opened.db;
    drop = opened.drop;
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  for (const dimension of DIMENSIONS) {
    for (const operator of ['is', 'is_not'] as const) {
      it(`computes the filter_${dimension} ${operator} condition once per query`, async () => {
        const filter = { dimension, operator, values: ['x'] } as Filter;
        const scope = { websiteId: 'ffffffffffffffffffffffff', range: RANGE, timezone: 'UTC', filters: [filter] };
        const plan = await sql<{ detail: string }>`explain query plan select count(*) from events e where ${scopeCondition(scope)}`.execute(db.kysely);
        const details = plan.rows.map((row) => row.detail);
        expect(details.length).toBeGreaterThan(0);
        expect(details.filter((detail) => /CORRELATED/.test(detail)), details.join('\n')).toEqual([]);
      });
    }
  }
});
