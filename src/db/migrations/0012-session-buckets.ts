import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * session_buckets: per website and 15-minute slot of UTC time (by session start), the sessions,
 * bounces and summed durations of the sessions table, kept by triggers on that table, so every
 * write to it (ingestion's upsert, the rebuild, a deletion) keeps them equal in the same
 * transaction. Every real time zone's offset is a multiple of 15 minutes, so the unfiltered
 * overview sums whole local days in any zone from at most 96 rows a day instead of reading every
 * session. Durations are whole milliseconds per session, as the raw reads round them.
 */

/** The SQL of a session row's bucket, bounce flag and duration, per engine (`row`: new, old or a table alias). */
function sessionTerms(engine: Engine, row: string) {
  const at = sql.raw(`${row}.started_at`);
  const end = sql.raw(`${row}.ended_at`);
  const pageviews = sql.raw(`${row}.pageviews`);
  const goals = sql.raw(`${row}.goals`);
  const bounce = sql`(case when ${pageviews} <= 1 and ${goals} = 0 then 1 else 0 end)`;
  if (engine === 'postgres') {
    return {
      bucket: sql`to_timestamp(floor(extract(epoch from ${at}) / 900) * 900)`,
      bounce,
      millis: sql`round(extract(epoch from (${end} - ${at})) * 1000)`,
    };
  }
  return {
    bucket: sql`(strftime('%Y-%m-%dT%H:', ${at}) || printf('%02d', cast(strftime('%M', ${at}) as integer) / 15 * 15) || ':00.000Z')`,
    bounce,
    millis: sql`cast(round((julianday(${end}) - julianday(${at})) * 86400000.0) as integer)`,
  };
}

type Terms = ReturnType<typeof sessionTerms>;

const add = (row: 'new' | 'old', t: Terms): RawBuilder<unknown> =>
  sql`insert into session_buckets (website_id, bucket, sessions, bounces, millis)
    values (${sql.raw(`${row}.website_id`)}, ${t.bucket}, 1, ${t.bounce}, ${t.millis})
    on conflict (website_id, bucket) do update set sessions = session_buckets.sessions + excluded.sessions,
      bounces = session_buckets.bounces + excluded.bounces, millis = session_buckets.millis + excluded.millis`;

const subtract = (row: 'new' | 'old', t: Terms): RawBuilder<unknown> =>
  sql`update session_buckets set sessions = sessions - 1, bounces = bounces - ${t.bounce}, millis = millis - ${t.millis}
    where website_id = ${sql.raw(`${row}.website_id`)} and bucket = ${t.bucket}`;

/** A session whose start did not move: one update by the difference. */
const change = (o: Terms, n: Terms): RawBuilder<unknown> =>
  sql`update session_buckets set bounces = bounces + ${n.bounce} - ${o.bounce}, millis = millis + ${n.millis} - ${o.millis}
    where website_id = new.website_id and bucket = ${n.bucket}`;

const WATCHED = sql.raw('started_at, ended_at, pageviews, goals');

async function createSqliteTriggers(db: Kysely<unknown>) {
  const o = sessionTerms('sqlite', 'old');
  const n = sessionTerms('sqlite', 'new');
  await sql`create trigger sessions_bucket_insert after insert on sessions begin ${add('new', n)}; end`.execute(db);
  await sql`create trigger sessions_bucket_delete after delete on sessions begin ${subtract('old', o)}; end`.execute(db);
  await sql`create trigger sessions_bucket_update after update of ${WATCHED} on sessions
    when old.started_at = new.started_at begin ${change(o, n)}; end`.execute(db);
  await sql`create trigger sessions_bucket_move after update of ${WATCHED} on sessions
    when old.started_at <> new.started_at begin ${subtract('old', o)}; ${add('new', n)}; end`.execute(db);
}

async function createPostgresTriggers(db: Kysely<unknown>) {
  const o = sessionTerms('postgres', 'old');
  const n = sessionTerms('postgres', 'new');
  await sql`create function session_buckets_follow() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        ${add('new', n)};
      elsif tg_op = 'DELETE' then
        ${subtract('old', o)};
      elsif old.started_at = new.started_at then
        ${change(o, n)};
      else
        ${subtract('old', o)};
        ${add('new', n)};
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger sessions_bucket_follow after insert or delete or update of ${WATCHED} on sessions
    for each row execute function session_buckets_follow()`.execute(db);
}

export function sessionBuckets(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('session_buckets')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('bucket', t.timestamp, (c) => c.notNull())
        .addColumn('sessions', 'bigint', (c) => c.notNull())
        .addColumn('bounces', 'bigint', (c) => c.notNull())
        .addColumn('millis', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('session_buckets_pk', ['website_id', 'bucket'])
        .execute();
      if (engine === 'postgres') await createPostgresTriggers(db);
      else await createSqliteTriggers(db);
      // The sessions already stored are counted by a background build (./derived-builds.ts).
      await markBuilds(db, 'migration 0012: session_buckets', true);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') {
        await sql`drop trigger sessions_bucket_follow on sessions`.execute(db);
        await sql`drop function session_buckets_follow()`.execute(db);
      } else {
        for (const name of ['insert', 'delete', 'update', 'move']) await sql`drop trigger ${sql.id(`sessions_bucket_${name}`)}`.execute(db);
      }
      await db.schema.dropTable('session_buckets').execute();
    },
  };
}
