// Which failures mean "the database cannot be reached or cannot take the work right now" (a
// restart, a failover, a pooler or network closing connections, a full disk, a lock held past the
// busy timeout) rather than a bug or bad input. Those answer 503 with Retry-After, are logged as a
// warning and never crash a background loop: retrying shortly is the right thing for a client.

/** Seconds a client is told to wait before retrying (the Retry-After header). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; retry shortly';

// PostgreSQL SQLSTATEs: class 08 (connection exception) is matched by prefix; 57P01-57P03 are
// admin_shutdown, crash_shutdown and cannot_connect_now (starting up or in recovery); 53300 is
// too_many_connections.
const PG_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

// Socket-level failures to reach the server (a host name that stops resolving is what a stopped
// container looks like on a compose network).
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// SQLite primary result codes (extended codes such as SQLITE_IOERR_WRITE or SQLITE_BUSY_SNAPSHOT
// start with them).
const SQLITE_CODES = ['SQLITE_BUSY', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CANTOPEN'];

// ClickHouse's error codes for a server that cannot take the work now: TIMEOUT_EXCEEDED (a read
// past its max_execution_time), TOO_MANY_SIMULTANEOUS_QUERIES, MEMORY_LIMIT_EXCEEDED. Current
// servers' errors carry the code (the client's ClickHouseError); 18.16's only start with it.
const CLICKHOUSE_CODES = new Set(['159', '202', '241']);
const CLICKHOUSE_MESSAGE = /^Code: (159|202|241)[,.]/;

// node-postgres reports a dropped or unreachable server with plain messages and no code.
const PG_MESSAGES = [
  /^Connection terminated/, // "... unexpectedly", "... due to connection timeout"
  /^timeout exceeded when trying to connect$/, // the pool's connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Query read timeout$/, // the client's query_timeout: a server that stopped answering
];

function codeOf(error: object): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
}

function matches(error: unknown, depth: number): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const code = codeOf(error);
  if (code.length === 5 && (code.startsWith('08') || PG_CODES.has(code))) return true;
  if (NETWORK_CODES.has(code)) return true;
  if (CLICKHOUSE_CODES.has(code) && error.constructor.name === 'ClickHouseError') return true;
  if (SQLITE_CODES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`))) return true;
  const message = (error as { message?: unknown }).message;
  if (typeof message === 'string' && [...PG_MESSAGES, CLICKHOUSE_MESSAGE].some((pattern) => pattern.test(message))) return true;
  // Connecting to a name with several addresses fails with an AggregateError of each attempt.
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested) && nested.some((inner) => matches(inner, depth + 1))) return true;
  return matches((error as { cause?: unknown }).cause, depth + 1);
}

/** True when the error says the database is unreachable or overloaded, not that the work is wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return matches(error, 0);
}

/**
 * What a log line may say about such a failure: the code and the driver's message, never the
 * error object (whose fields can hold the connection settings) nor a stack trace.
 */
export function describeFault(error: unknown): { code?: string; message: string } {
  if (typeof error !== 'object' || error === null) return { message: String(error) };
  const code = codeOf(error) || undefined;
  const message = (error as { message?: unknown }).message;
  return { ...(code ? { code } : {}), message: typeof message === 'string' ? message : 'unknown error' };
}
