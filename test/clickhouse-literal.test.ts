import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { compileClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { clickhouseLiteral } from '../src/db/clickhouse/literal.ts';
import { CLICKHOUSE_URL, describeWithClickHouse } from './helpers/clickhouse.ts';

// ClickHouse 18.16 has no server-side query parameters, so every value a request supplies is
// written into the SQL text by clickhouseLiteral. Each hostile string must come back from a real
// server exactly as sent, and nothing but plain values may be written at all.

const HOSTILE = [
  "it's",
  "'; drop table events; --",
  'back\\slash',
  '\\',
  "\\'",
  "\\\\'",
  'line\nbreak\rreturn\ttab',
  'nul\u0000byte',
  '\u001f\u007f',
  '\\N',
  '\\x27',
  'emoji 🎉 and ünïcödé',
  '%_*',
  '"double" `back`',
  '{name:String}',
  '',
];

describe('ClickHouse literals, without a server', () => {
  it('refuses what is not a plain value, and writes numbers and nulls as such', () => {
    expect(clickhouseLiteral(null)).toBe('NULL');
    expect(clickhouseLiteral(42)).toBe('42');
    expect(clickhouseLiteral(-1.5)).toBe('-1.5');
    expect(clickhouseLiteral(true)).toBe('1');
    expect(() => clickhouseLiteral(Number.NaN)).toThrow(/finite/);
    expect(() => clickhouseLiteral(Number.POSITIVE_INFINITY)).toThrow(/finite/);
    expect(() => clickhouseLiteral({ toString: () => "1'" })).toThrow(/no ClickHouse literal/);
    expect(() => clickhouseLiteral(new Date())).toThrow(/no ClickHouse literal/);
  });

  it('compiles values as literals, never as bound parameters', () => {
    const text = compileClickHouse(sql`select ${"a'b"} as v where x in (${sql.join([1, 2])})`);
    expect(text).toBe("select 'a\\'b' as v where x in (1, 2)");
  });
});

describeWithClickHouse('ClickHouse literals on a real server', () => {
  const ch = openClickHouse(`${CLICKHOUSE_URL}/default`);
  afterAll(() => ch.close());

  it('round-trips every hostile string exactly, alone and in a comparison', async () => {
    for (const value of HOSTILE) {
      const [row] = await ch.rows<{ v: string; same: number; length: number }>(
        sql`select ${value} as v, ${value} = ${value} as same, lengthUTF8(${value}) as length`,
      );
      expect(row!.v, JSON.stringify(value)).toBe(value);
      expect(Number(row!.same)).toBe(1);
      expect(Number(row!.length)).toBe([...value].length);
    }
  });

  it('keeps a hostile value inside its literal: the query still returns one row and one column', async () => {
    const rows = await ch.rows<Record<string, unknown>>(sql`select ${"x' as a, 'y"} as v from system.one`);
    expect(rows).toEqual([{ v: "x' as a, 'y" }]);
  });
});
