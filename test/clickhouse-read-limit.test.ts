import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { isDatabaseUnavailable } from '../src/db/faults.ts';
import { CLICKHOUSE_URL, describeWithClickHouse } from './helpers/clickhouse.ts';

// A read that runs past its limit is stopped by ClickHouse itself (max_execution_time), so a
// request the client gave up on leaves no query running on the server, and it answers as an
// unavailable database does (503), not as a bug.

describeWithClickHouse('a ClickHouse read past its limit', () => {
  it('is stopped on the server and counts as the database being unavailable', async () => {
    const ch = openClickHouse(`${CLICKHOUSE_URL}/default`, async () => {}, { readLimitSeconds: 1 });
    try {
      const started = Date.now();
      const failure = await ch.rows(sql`select count() as n from numbers(100000000000) where sipHash64(number) % 7 = 3`).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(String((failure as Error).message)).toMatch(/^Code: 159[,.]|Timeout exceeded/);
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000);
      const [running] = await ch.rows<{ n: string }>(sql`select count() as n from system.processes where query like '%sipHash64(number) % 7 = 3%' and query not like '%system.processes%'`);
      expect(Number(running!.n)).toBe(0);
    } finally {
      await ch.close();
    }
  });
});
