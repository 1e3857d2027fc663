import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * What the website API reads (website-api.md section 5): more dimensions on each event, sessions
 * with their entry and exit pages, visitor profiles from identify, notes, and the extra payment
 * fields. Events stored before this read as unknown (null) in the new dimensions; their sessions
 * are rebuilt from them here, so bounce rate and entry pages cover old traffic too.
 */
/** Where a session came from: its first event's referrer and campaign parameters. */
const SESSION_SOURCE_COLUMNS = [
  'referrer_host',
  'referrer_source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'ref_param',
  'source_param',
  'via_param',
];

export function websiteApi(engine: Engine) {
  const t = columnTypes(engine);
  const websiteRef = (c: any) => c.notNull().references('websites.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const count = (c: any) => c.notNull().defaultTo(0); // eslint-disable-line @typescript-eslint/no-explicit-any
  // The session's source columns, and the event's own new ones.
  const eventText = [...SESSION_SOURCE_COLUMNS, 'region', 'city', 'browser_version', 'os_version', 'link_url', 'description'];
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const column of eventText) await db.schema.alterTable('events').addColumn(column, 'text').execute();
      await db.schema.alterTable('events').addColumn('viewport_width', 'integer').execute();
      await db.schema.alterTable('events').addColumn('viewport_height', 'integer').execute();

      await db.schema
        .createTable('sessions')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addColumn('started_at', t.timestamp, (c) => c.notNull())
        .addColumn('ended_at', t.timestamp, (c) => c.notNull())
        .addColumn('pageviews', 'integer', count)
        .addColumn('events', 'integer', count)
        .addColumn('goals', 'integer', count)
        .addColumn('entry_hostname', 'text')
        .addColumn('entry_path', 'text')
        .addColumn('exit_path', 'text')
        .$call((table) => SESSION_SOURCE_COLUMNS.reduce((t, column) => t.addColumn(column, 'text'), table))
        .addPrimaryKeyConstraint('sessions_pk', ['website_id', 'session_id'])
        .execute();
      await db.schema.createIndex('sessions_website_start_idx').on('sessions').columns(['website_id', 'started_at']).execute();
      await db.schema.createIndex('sessions_website_visitor_idx').on('sessions').columns(['website_id', 'visitor_id']).execute();
      await backfillSessions(db);

      await db.schema
        .createTable('visitor_profiles')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('image', 'text')
        .addColumn('metadata', 'text')
        .addColumn('identified_at', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('visitor_profiles_pk', ['website_id', 'visitor_id'])
        .execute();

      await db.schema
        .createTable('notes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('author_id', 'text', (c) => c.references('accounts.id').onDelete('set null'))
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('timestamp', t.timestamp, (c) => c.notNull())
        .addColumn('idempotency_key', 'text')
        .addColumn('request_digest', 'text')
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('notes_website_time_idx').on('notes').columns(['website_id', 'timestamp']).execute();
      await db.schema
        .createIndex('notes_idempotency_idx')
        .on('notes')
        .columns(['website_id', 'author_id', 'idempotency_key'])
        .unique()
        .execute();

      await db.schema.alterTable('payments').addColumn('customer_id', 'text').execute();
      await db.schema.alterTable('payments').addColumn('customer_name', 'text').execute();
      await db.schema
        .alterTable('payments')
        .addColumn('is_free_trial', t.boolean, (c) => c.notNull().defaultTo(engine === 'postgres' ? false : 0))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const column of ['is_free_trial', 'customer_name', 'customer_id']) await db.schema.alterTable('payments').dropColumn(column).execute();
      await db.schema.dropTable('notes').execute();
      await db.schema.dropTable('visitor_profiles').execute();
      await db.schema.dropTable('sessions').execute();
      for (const column of [...eventText, 'viewport_width', 'viewport_height']) await db.schema.alterTable('events').dropColumn(column).execute();
    },
  };
}

/** One sessions row per (website, SDK session id) of the events already stored. */
async function backfillSessions(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into sessions (website_id, session_id, visitor_id, started_at, ended_at, pageviews, events, goals)
    select website_id, session_id, min(visitor_id), min(occurred_at), max(occurred_at),
      sum(case when type = 'pageview' then 1 else 0 end), count(*),
      sum(case when type = 'custom' and name is not null then 1 else 0 end)
    from events where session_id is not null
    group by website_id, session_id`.execute(db);
  const firstPageview = (order: 'asc' | 'desc') => sql`
    select website_id, session_id, path, hostname,
      row_number() over (partition by website_id, session_id order by occurred_at ${sql.raw(order)}, id ${sql.raw(order)}) as rn
    from events where type = 'pageview' and session_id is not null`;
  await sql`
    update sessions set entry_path = f.path, entry_hostname = f.hostname from (${firstPageview('asc')}) f
    where f.rn = 1 and f.website_id = sessions.website_id and f.session_id = sessions.session_id`.execute(db);
  await sql`
    update sessions set exit_path = f.path from (${firstPageview('desc')}) f
    where f.rn = 1 and f.website_id = sessions.website_id and f.session_id = sessions.session_id`.execute(db);
}
