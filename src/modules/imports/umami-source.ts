import pg from 'pg';
import { invalidField } from '../../errors.ts';

// An Umami database (PostgreSQL) as an import's source: its connection URL checked against the
// hosts the operator allows (IMPORT_UMAMI_HOSTS), a short-lived read-only connection, the check
// that its schema is Umami's (2.13 or later, 3.x: website_event with visit_id and hostname), and
// the reads of its websites. The URL carries a password: it is never logged, returned nor put in
// an error message; errors name the host and database only.

/** How long connecting may take before the source counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long one statement on the source may run (a chunk's aggregates over a few days). */
export const STATEMENT_TIMEOUT_MS = 120_000;

export interface UmamiTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  ssl: boolean;
  /** The PostgreSQL schema Umami's tables are in (Prisma's `?schema=`); null: the user's default. */
  schema: string | null;
}

/** Where the URL points, without its credential: for messages and the report. */
export const describeTarget = (target: UmamiTarget): string => `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}/${target.database}`;

const FIELD = 'body.databaseUrl';
const SSL_MODES = new Set(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify']);
/** Parameters of Prisma's URL (Umami's DATABASE_URL) about its own pool: accepted and ignored. */
const PRISMA_POOL_PARAMETERS = new Set(['connection_limit', 'pool_timeout', 'connect_timeout', 'socket_timeout', 'pgbouncer', 'statement_cache_size']);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * The connection URL as explicit settings: postgres(ql)://user:password@host[:port]/database
 * [?sslmode=...&schema=...] (Umami's own DATABASE_URL, Prisma's pool parameters ignored). Anything
 * that could make pg connect elsewhere than the URL's host (a `host` parameter, a socket path,
 * several hosts) is refused, then the host must be one the operator allows.
 */
export function parseUmamiUrl(raw: string, allowedHosts: readonly string[]): UmamiTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField(FIELD, 'must be a PostgreSQL connection URL (postgres://user:password@host:5432/umami)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw invalidField(FIELD, 'must start with postgres:// or postgresql://');
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === '' || host.includes(',')) throw invalidField(FIELD, 'must name one host');
  const database = decoded(url.pathname.replace(/^\//, ''), 'database name');
  if (database === '' || database.includes('/')) throw invalidField(FIELD, 'must name the database (postgres://user:password@host:5432/umami)');
  let ssl = false;
  let schema: string | null = null;
  for (const [name, value] of url.searchParams) {
    if (name === 'sslmode') {
      if (!SSL_MODES.has(value)) throw invalidField(FIELD, `has sslmode "${value}": use disable, require, verify-ca or verify-full`);
      ssl = value !== 'disable' && value !== 'prefer';
    } else if (name === 'schema') {
      if (!IDENTIFIER.test(value)) throw invalidField(FIELD, `has schema "${value}", which is not a plain PostgreSQL name`);
      schema = value;
    } else if (!PRISMA_POOL_PARAMETERS.has(name)) {
      throw invalidField(FIELD, `has the parameter "${name}": only sslmode and schema are accepted`);
    }
  }
  if (!allowedHosts.includes(host)) {
    throw invalidField(FIELD, `names the host ${host}, which this server may not connect to (the operator allows: ${allowedHosts.join(', ')}; IMPORT_UMAMI_HOSTS)`);
  }
  const port = url.port === '' ? 5432 : Number(url.port);
  return { host, port, database, user: decoded(url.username, 'user name'), password: decoded(url.password, 'password'), ssl, schema };
}

function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalidField(FIELD, `has a ${what} with a broken %-escape`);
  }
}

/** The source could not be reached or read: at creation a 400, in the job a retry, then a failed import. */
export class UmamiSourceError extends Error {}

/** A pg error's message without anything of the URL but its host and database. */
function reason(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = (error as Error)?.message ?? String(error);
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (/timeout/i.test(message)) return 'it did not answer in time';
  // PostgreSQL's own messages (authentication failed for user "x", database "y" does not exist) name no secret.
  return message.replace(/postgres(ql)?:\/\/\S*/gi, '<url>');
}

export interface UmamiConnection {
  client: pg.Client;
  target: UmamiTarget;
  close(): Promise<void>;
}

/** A connection whose transactions are read-only, with a short connect timeout and a statement timeout. */
export async function connectUmami(target: UmamiTarget): Promise<UmamiConnection> {
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    database: target.database,
    user: target.user,
    password: target.password,
    ssl: target.ssl ? { rejectUnauthorized: false } : false,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS + 5_000,
    application_name: 'sightline-import',
    options: `-c default_transaction_read_only=on${target.schema ? ` -c search_path=${target.schema}` : ''}`,
  });
  // A connection dropped while idle must not crash the process: the next query fails instead.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new UmamiSourceError(`cannot connect to ${describeTarget(target)}: ${reason(error)}`);
  }
  return { client, target, close: () => client.end().catch(() => {}) };
}

/** Runs `read` in one read-only transaction of the source; a failure is a UmamiSourceError. */
export async function readOnly<T>(connection: UmamiConnection, read: (client: pg.Client) => Promise<T>): Promise<T> {
  const { client } = connection;
  try {
    await client.query('begin transaction isolation level repeatable read read only');
    const result = await read(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    if (error instanceof UmamiSourceError) throw error;
    throw new UmamiSourceError(`reading ${describeTarget(connection.target)} failed: ${reason(error)}`);
  }
}

/** The columns the import reads, by table: a database without them is not one Umami 2.13+/3.x made. */
export const REQUIRED_COLUMNS: Record<string, string[]> = {
  website: ['website_id', 'name', 'domain', 'deleted_at'],
  session: ['session_id', 'website_id', 'browser', 'os', 'device', 'country', 'region'],
  website_event: [
    'event_id', 'website_id', 'session_id', 'visit_id', 'created_at', 'url_path', 'hostname', 'referrer_domain',
    'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'event_type', 'event_name',
  ],
};

/** null when the schema has what the import reads, else what it lacks. */
export async function schemaProblem(client: pg.Client): Promise<string | null> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    `select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and table_name = any($1::text[])`,
    [Object.keys(REQUIRED_COLUMNS)],
  );
  const present = new Set(rows.map((row) => `${row.table_name}.${row.column_name}`));
  const missing = Object.entries(REQUIRED_COLUMNS).flatMap(([table, columns]) => columns.map((column) => `${table}.${column}`)).filter((name) => !present.has(name));
  if (missing.length === 0) return null;
  return `is not an Umami database (2.13 or later): it lacks ${missing.slice(0, 6).join(', ')}${missing.length > 6 ? ', …' : ''}`;
}

/** Events are counted up to this many per website in a listing (a count of a large table is slow). */
export const MAX_COUNTED_EVENTS = 1_000_000;

export interface UmamiWebsite {
  id: string;
  name: string;
  domain: string | null;
  /** Page views and custom events Umami holds for it, counted up to MAX_COUNTED_EVENTS. */
  events: number;
  /** The first and last event, ISO (null without events). */
  firstEventAt: string | null;
  lastEventAt: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Umami's websites (not deleted) in name order, each with its events (counted up to a bound) and
 * its first and last event: each read on Umami's (website_id, created_at) index, so a listing of a
 * large database stays quick.
 */
export async function listUmamiWebsites(client: pg.Client, websiteId?: string): Promise<UmamiWebsite[]> {
  if (websiteId !== undefined && !UUID.test(websiteId)) return [];
  const { rows } = await client.query<{ id: string; name: string; domain: string | null; events: string; first_at: Date | null; last_at: Date | null }>(
    `select w.website_id::text as id, w.name, w.domain,
            (select count(*) from (select 1 from website_event e where e.website_id = w.website_id and e.event_type in (1, 2) limit ${MAX_COUNTED_EVENTS}) counted) as events,
            (select min(e.created_at) from website_event e where e.website_id = w.website_id and e.event_type in (1, 2)) as first_at,
            (select max(e.created_at) from website_event e where e.website_id = w.website_id and e.event_type in (1, 2)) as last_at
       from website w
      where w.deleted_at is null ${websiteId ? 'and w.website_id = $1::uuid' : ''}
      order by lower(w.name), w.website_id
      limit 1000`,
    websiteId ? [websiteId] : [],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    domain: row.domain,
    events: Number(row.events),
    firstEventAt: row.first_at ? row.first_at.toISOString() : null,
    lastEventAt: row.last_at ? row.last_at.toISOString() : null,
  }));
}

/**
 * Connects to the URL's database and checks it is Umami's: the connection to read it with, or a
 * 400 naming the field (unreachable, refused, not an Umami database).
 */
export async function openCheckedSource(target: UmamiTarget): Promise<UmamiConnection> {
  let connection: UmamiConnection;
  try {
    connection = await connectUmami(target);
  } catch (error) {
    throw invalidField(FIELD, (error as Error).message);
  }
  try {
    const problem = await readOnly(connection, schemaProblem);
    if (problem) throw invalidField(FIELD, `points to ${describeTarget(target)}, which ${problem}`);
    return connection;
  } catch (error) {
    await connection.close();
    if (error instanceof UmamiSourceError) throw invalidField(FIELD, error.message);
    throw error;
  }
}
