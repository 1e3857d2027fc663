// Environment variables -> one typed, frozen Config. Everything the process reads from the
// environment is read here, so the README's configuration table has a single source.

import { parseClickHouseUrl } from './db/clickhouse/clickhouse.ts';

export interface Limits {
  tokensPerAccount: number;
  apiKeysPerWebsite: number;
  alertsPerWebsite: number;
}

export interface RateLimitConfig {
  /** Requests per window for one authenticated credential. */
  perCredential: number;
  /** Requests per window for one client address without a valid credential. */
  perAddress: number;
  /** Requests per window for one client address on public routes (browser ingestion). */
  perPublicAddress: number;
  windowMs: number;
}

export interface SignInLimitConfig {
  /** Sign-in attempts per window for one e-mail address. */
  perAccount: number;
  /** Sign-in and password-reset attempts per window from one client address. */
  perAddress: number;
  windowMs: number;
}

export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  publicUrl: string;
  logLevel: string;
  trustProxy: boolean;
  secretKey: string | undefined;
  /** Older keys, still accepted for decryption while credentials are re-encrypted. */
  previousSecretKeys: string[];
  smtpUrl: string | undefined;
  mailFrom: string;
  alertCooldownSeconds: number;
  /**
   * The request header (name in lower case) that a trusted proxy or CDN fills with the visitor's
   * ISO-3166 country code; null reads no country. Unset: cf-ipcountry with TRUST_PROXY, else none.
   */
  countryHeader: string | null;
  /** An MMDB file for region and city ('none' turns lookups off); unset: the bundled DB-IP city lite. */
  geoipDatabase: string | undefined;
  limits: Limits;
  rateLimit: RateLimitConfig;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>`; unset, it is open. */
  metricsToken: string | undefined;
  /** PostgreSQL: how long the server waits for one statement's answer before giving the connection up. */
  databaseQueryTimeoutMs: number;
  /** Analytics reads run at once; unset: one per SQLite read worker, or every core but one on PostgreSQL. */
  analyticsReadConcurrency: number | undefined;
  /**
   * How long an analytics read waits for the events accepted before it to reach the derived data
   * (or ClickHouse) before it answers without them, marked `X-Sightline-Derived-Data: behind`;
   * null: as long as it takes.
   */
  analyticsSettleWaitMs: number | null;
  /**
   * How old the events an analytics read must include are: every event accepted at least this
   * long before the read; newer ones when the background deriver already has them (0: every
   * event accepted before the read, so each read waits for a settle of its own under load).
   */
  analyticsReadLagMs: number;
  /** `open`: anyone may create an account on the dashboard; `invite` (default): setup, invitations and `sightline admin` only. */
  signup: 'open' | 'invite';
  signInLimit: SignInLimitConfig;
  /**
   * Redis (redis:// or rediss://) for what every instance must share: the rate-limit counters.
   * Unset: PostgreSQL keeps them, or the process itself on SQLite (one process by design).
   */
  redisUrl: string | undefined;
  /** Put before every key Sightline writes in Redis, so several installations can share one. */
  redisKeyPrefix: string;
  /**
   * ClickHouse (http(s)://[user[:password]@]host[:port]/database) for the raw events and the
   * website API's reads; unset: the events live in the relational database.
   */
  clickhouseUrl: string | undefined;
  /** CLICKHOUSE_SAMPLE_THRESHOLD: events in a read's range above which ClickHouse samples it (0: never). */
  clickhouseSampleThreshold: number;
  /**
   * Background rebuilds (a time-zone change's move of the day rollups): each transaction aims at
   * this long. Unset: 8 ms on SQLite (whose statements hold the event loop), 200 on PostgreSQL
   * (where a chunk holds only the website's derived-data lock).
   */
  rebuildChunkMs: number | undefined;
  /** And takes at most this many visitors. */
  rebuildChunkMaxVisitors: number;
  /** Each payment provider's API root (PROVIDER_ONE_API_URL ...); a provider left out is called at its real API. */
  providerApiUrls: ProviderApiUrls;
  integrationJobs: IntegrationJobsConfig;
  mailReports: MailReportsConfig;
  imports: ImportsConfig;
}

export interface ImportsConfig {
  /** Whether this instance runs the imports' jobs (reading uploaded exports, deleting imports); attempts, retry delay and lease are integrationJobs'. */
  jobs: boolean;
  /** The largest upload POST .../imports accepts, in bytes (IMPORT_MAX_UPLOAD_MB, default 100). */
  maxUploadBytes: number;
  /** Rows an import's job commits at a time (IMPORT_CHUNK_ROWS, default 500). */
  chunkRows: number;
  /**
   * The hosts an Umami import may connect to (IMPORT_UMAMI_HOSTS, comma-separated, lower case;
   * default the loopback names): the server connects to nothing else, so a member cannot make it
   * reach into the operator's network. Unset in a partial override: the default.
   */
  umamiHosts?: readonly string[];
  /** Days of an Umami database an import's job reads and commits at a time (IMPORT_UMAMI_CHUNK_DAYS, default 7). */
  umamiChunkDays?: number;
}

/** The loopback names: where an Umami import may connect when IMPORT_UMAMI_HOSTS is unset. */
export const DEFAULT_UMAMI_HOSTS: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '::1']);
export const DEFAULT_UMAMI_CHUNK_DAYS = 7;

function hostList(env: Env, name: string, fallback: readonly string[]): readonly string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const hosts = raw.split(',').map((host) => host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1')).filter(Boolean);
  if (hosts.some((host) => /[\s/@?#]/.test(host))) throw new ConfigError(`${name} must be host names or addresses, comma-separated, got "${raw}"`);
  return Object.freeze(hosts);
}

/** Reports by mail and the traffic-spike alert (src/modules/reports; README "Reports by mail"). */
export interface MailReportsConfig {
  /** Whether this instance schedules them (any number of instances may: each period is mailed once). */
  enabled: boolean;
  /** A spike needs at least this many visitors in the hour... */
  spikeMinVisitors: number;
  /** ...and this many times the usual for that hour (the median of the same hour over 28 days). */
  spikeFactor: number;
  /** At most one spike mail per website in this many hours. */
  spikeCooldownHours: number;
}

/** The four providers connected with an API credential, by the names of providers.ts. */
export type ProviderApiUrls = Partial<Record<'provider-one' | 'provider-two' | 'provider-three' | 'provider-four', string>>;

export interface IntegrationJobsConfig {
  /** Whether this instance runs integration jobs (verifying credentials, importing payment history). */
  enabled: boolean;
  /** Attempts of a job before it is marked failed with its last error. */
  maxAttempts: number;
  /** The wait after the first failed attempt; doubled after each next one (at most an hour). */
  retryBaseMs: number;
  /** How long a claimed job is its worker's; renewed after every page, taken over by another instance once over. */
  leaseMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function boolean(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  return raw === '1' || raw === 'true' || raw === 'yes';
}

/** A header name, lower-cased; "none" reads no header. */
function headerName(env: Env, name: string, fallback: string | null): string | null {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === 'none') return null;
  if (raw === '') return fallback;
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(raw)) throw new ConfigError(`${name} must be an HTTP header name or "none", got "${raw}"`);
  return raw;
}

/** A bearer token: printable ASCII without spaces (what an Authorization header can carry). */
function bearerToken(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]+$/.test(raw)) throw new ConfigError(`${name} must be printable ASCII without spaces`);
  return raw;
}

/** An http(s) URL naming a database; the value is never echoed, as it may hold a password. */
function clickhouseUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    parseClickHouseUrl(raw);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL whose path, if any, is a database name (http://[user[:password]@]host[:port]/database)`);
  }
  return raw;
}

/** The URL, or undefined when `raw` is not one. */
function parsedUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** An http(s) URL (a provider's API root), without a trailing slash. */
function httpUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const url = parsedUrl(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ConfigError(`${name} must be an http:// or https:// URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function providerApiUrls(env: Env): ProviderApiUrls {
  const urls: ProviderApiUrls = {};
  for (const [provider, name] of [
    ['provider-one', 'PROVIDER_ONE_API_URL'],
    ['provider-two', 'PROVIDER_TWO_API_URL'],
    ['provider-three', 'PROVIDER_THREE_API_URL'],
    ['provider-four', 'PROVIDER_FOUR_API_URL'],
  ] as const) {
    const url = httpUrl(env, name);
    if (url !== undefined) urls[provider] = url;
  }
  return urls;
}

/** A redis:// or rediss:// URL; the value is never echoed, as it may hold a password. */
function redisUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const url = parsedUrl(raw);
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new ConfigError(`${name} must be a redis:// or rediss:// URL (redis://[:password@]host[:port][/db])`);
  }
  return raw;
}

/** A Redis key prefix: printable ASCII without spaces, at most 64 characters. */
function keyPrefix(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[\x21-\x7e]{1,64}$/.test(raw)) throw new ConfigError(`${name} must be at most 64 printable ASCII characters without spaces`);
  return raw;
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const host = env.HOST || '127.0.0.1';
  const port = integer(env, 'PORT', 3000);
  const config: Config = {
    host,
    port,
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/sightline.db',
    publicUrl: (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: boolean(env, 'TRUST_PROXY'),
    secretKey: env.SIGHTLINE_SECRET_KEY || undefined,
    previousSecretKeys: (env.SIGHTLINE_PREVIOUS_SECRET_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'Sightline <sightline@localhost>',
    alertCooldownSeconds: integer(env, 'ALERT_COOLDOWN_SECONDS', 60),
    // A country header is only as trustworthy as the proxy that sets it: without one, any visitor
    // would choose their own country (and slip past excludedCountries). Cloudflare's by default
    // only behind a proxy (TRUST_PROXY), any other header when named.
    countryHeader: headerName(env, 'COUNTRY_HEADER', boolean(env, 'TRUST_PROXY') ? 'cf-ipcountry' : null),
    geoipDatabase: env.GEOIP_DATABASE || undefined,
    limits: {
      tokensPerAccount: integer(env, 'LIMIT_TOKENS_PER_ACCOUNT', 20, 1),
      apiKeysPerWebsite: integer(env, 'LIMIT_API_KEYS_PER_WEBSITE', 10, 1),
      alertsPerWebsite: integer(env, 'LIMIT_ALERTS_PER_WEBSITE', 25, 1),
    },
    rateLimit: {
      perCredential: integer(env, 'RATE_LIMIT_PER_CREDENTIAL', 600, 1),
      perAddress: integer(env, 'RATE_LIMIT_PER_ADDRESS', 300, 1),
      perPublicAddress: integer(env, 'RATE_LIMIT_PUBLIC_PER_ADDRESS', 6000, 1),
      windowMs: integer(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1) * 1000,
    },
    metricsToken: bearerToken(env, 'METRICS_TOKEN'),
    databaseQueryTimeoutMs: integer(env, 'DATABASE_QUERY_TIMEOUT_SECONDS', 60, 1) * 1000,
    analyticsReadConcurrency: env.ANALYTICS_READ_CONCURRENCY ? integer(env, 'ANALYTICS_READ_CONCURRENCY', 1, 1) : undefined,
    analyticsReadLagMs: integer(env, 'ANALYTICS_READ_LAG_MS', 1000, 0),
    analyticsSettleWaitMs: env.ANALYTICS_SETTLE_WAIT_MS?.trim().toLowerCase() === 'unbounded' ? null : integer(env, 'ANALYTICS_SETTLE_WAIT_MS', 20, 0),
    signup: oneOf(env, 'SIGNUP', ['open', 'invite'] as const, 'invite'),
    signInLimit: {
      perAccount: integer(env, 'SIGN_IN_LIMIT_PER_ACCOUNT', 10, 1),
      perAddress: integer(env, 'SIGN_IN_LIMIT_PER_ADDRESS', 30, 1),
      windowMs: integer(env, 'SIGN_IN_LIMIT_WINDOW_SECONDS', 900, 1) * 1000,
    },
    redisUrl: redisUrl(env, 'REDIS_URL'),
    redisKeyPrefix: keyPrefix(env, 'REDIS_KEY_PREFIX', 'sightline:'),
    clickhouseUrl: clickhouseUrl(env, 'CLICKHOUSE_URL'),
    // Events in a read's range above which ClickHouse answers it from a sample (0: never sample).
    clickhouseSampleThreshold: integer(env, 'CLICKHOUSE_SAMPLE_THRESHOLD', 10_000_000, 0),
    rebuildChunkMs: env.REBUILD_CHUNK_MS ? integer(env, 'REBUILD_CHUNK_MS', 1, 1) : undefined,
    rebuildChunkMaxVisitors: integer(env, 'REBUILD_CHUNK_MAX_VISITORS', 5000, 1),
    providerApiUrls: providerApiUrls(env),
    integrationJobs: {
      enabled: oneOf(env, 'INTEGRATION_JOBS', ['on', 'off'] as const, 'on') === 'on',
      maxAttempts: integer(env, 'INTEGRATION_JOB_ATTEMPTS', 5, 1),
      retryBaseMs: integer(env, 'INTEGRATION_JOB_RETRY_SECONDS', 30, 1) * 1000,
      leaseMs: integer(env, 'INTEGRATION_JOB_LEASE_SECONDS', 120, 5) * 1000,
    },
    mailReports: {
      enabled: oneOf(env, 'MAIL_REPORTS', ['on', 'off'] as const, 'on') === 'on',
      spikeMinVisitors: integer(env, 'SPIKE_MIN_VISITORS', 20, 1),
      spikeFactor: integer(env, 'SPIKE_FACTOR', 3, 1),
      spikeCooldownHours: integer(env, 'SPIKE_COOLDOWN_HOURS', 6, 1),
    },
    imports: {
      jobs: oneOf(env, 'IMPORT_JOBS', ['on', 'off'] as const, 'on') === 'on',
      maxUploadBytes: integer(env, 'IMPORT_MAX_UPLOAD_MB', 100, 1) * 1024 * 1024,
      chunkRows: integer(env, 'IMPORT_CHUNK_ROWS', 500, 1),
      umamiHosts: hostList(env, 'IMPORT_UMAMI_HOSTS', DEFAULT_UMAMI_HOSTS),
      umamiChunkDays: integer(env, 'IMPORT_UMAMI_CHUNK_DAYS', DEFAULT_UMAMI_CHUNK_DAYS, 1),
    },
    ...overrides,
  };
  return Object.freeze(config);
}
