import { createHmac } from 'node:crypto';
import type { RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { CompiledQuery, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Keyring } from '../crypto/keyring.ts';
import type { Database } from '../db/schema.ts';

// Where the rate-limit counters live: one choice for the one registration of @fastify/rate-limit
// that the route guard's limiter and the dashboard's sign-in throttles share.
//
//   REDIS_URL set  Redis, through the plugin's own store (one Lua script per hit). Redis is an
//                  aid, not the service's database: while it does not answer, requests go through
//                  unlimited (skipOnError), and the outage is logged once at warn.
//   PostgreSQL     the rate_limit_counters table, one upsert per turn of the event loop for the
//                  hits asked in it. A failure answers 503 like every request that needs the
//                  database (authentication has just read it).
//   SQLite         the process's memory (an LRU of keys): one process by design. Not the plugin's
//                  LocalStore, which hands every caller the same counter object, so requests
//                  counted in one turn all read the last count (five at once with three left: all
//                  five refused).
//
// Every instance on one Redis or one PostgreSQL then counts into the same fixed windows, with the
// keys and limits the callers chose. The shared stores keep a keyed digest of each key (HMAC under
// the credential key, which every instance shares), never the client address or e-mail in it.

export type RateLimitStoreKind = 'memory' | 'postgres' | 'redis';

interface Counter {
  current: number;
  /** Milliseconds left in the key's window. */
  ttl: number;
}

type IncrCallback = (error: Error | null, result?: Counter) => void;

interface RouteLimitOptions {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
  routeInfo?: { method?: string | string[]; url?: string };
}

/** The storage behind a shared store: counts one hit of a (digested, namespaced) key. */
interface Counting {
  hit(key: string, timeWindow: number, max: number): Promise<Counter>;
}

/** How long a Redis command may take before the request goes through without it. */
const REDIS_COMMAND_TIMEOUT_MS = 1_000;
const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** How often, at most, one instance deletes the PostgreSQL counters whose window has ended. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The hits of one turn of the event loop, one row per key with its number of hits: a new window
 * when the key has none or its window has ended, else that many more in it. Keys come sorted, so
 * two instances' statements lock their rows in the same order (never a deadlock).
 */
const PG_HITS = `insert into rate_limit_counters as c (key, count, reset_at)
  select key, hits, now() + window_ms * interval '1 millisecond'
  from unnest($1::text[], $2::int[], $3::float8[]) as h(key, hits, window_ms)
  on conflict (key) do update set
    count = case when c.reset_at <= now() then excluded.count else c.count + excluded.count end,
    reset_at = case when c.reset_at <= now() then excluded.reset_at else c.reset_at end
  returning key, count, greatest(0, ceil(extract(epoch from c.reset_at - now()) * 1000))::float8 as ttl`;

const PG_SWEEP = CompiledQuery.raw('delete from rate_limit_counters where reset_at < now()');

/**
 * The store the plugin calls (`incr(key, callback, timeWindow, max)` and `child(routeOptions)`,
 * as its LocalStore and RedisStore). Only fixed windows: Sightline's limiters use neither
 * continueExceeding nor exponentialBackoff, and a route asking for them is refused at boot rather
 * than silently counted otherwise.
 */
class SharedStore {
  constructor(
    private readonly counting: Counting,
    private readonly digest: (key: string) => string,
    private readonly namespace = '',
  ) {}

  incr(key: string, callback: IncrCallback, timeWindow: number, max: number): void {
    this.counting.hit(this.namespace + this.digest(key), timeWindow, max).then(
      (counter) => callback(null, counter),
      (error: Error) => callback(error),
    );
  }

  child(routeOptions: RouteLimitOptions): SharedStore {
    refuseSlidingWindows(routeOptions);
    const route = routeOptions.routeInfo;
    // A route's own `config.rateLimit` counts apart, as in the plugin's stores; a limiter made by
    // createRateLimit() or rateLimit() has no route and shares the keys' namespace.
    const namespace = route?.url ? `${this.namespace}${String(route.method)}${route.url}-` : this.namespace;
    return new SharedStore(this.counting, this.digest, namespace);
  }
}

function refuseSlidingWindows(options: RouteLimitOptions): void {
  if (options.continueExceeding || options.exponentialBackoff) {
    throw new Error('The shared rate-limit store counts fixed windows only (no continueExceeding or exponentialBackoff)');
  }
}

/** The plugin's `store` option: a class it instantiates with its global options. */
function storeClass(root: SharedStore): NonNullable<RateLimitPluginOptions['store']> {
  class Store {
    constructor(options: RouteLimitOptions) {
      refuseSlidingWindows(options);
    }
    incr(key: string, callback: IncrCallback, timeWindow: number, max: number): void {
      root.incr(key, callback, timeWindow, max);
    }
    child(routeOptions: RouteLimitOptions): SharedStore {
      return root.child(routeOptions);
    }
  }
  // The plugin's typings declare incr(key, callback) only; it passes timeWindow and max as well.
  return Store as unknown as NonNullable<RateLimitPluginOptions['store']>;
}

/** A keyed digest of a limiter key: 128 bits, base64url. */
function keyDigest(app: FastifyInstance): (key: string) => string {
  // Only the shared stores need the keyring (the app registers it before the route guard).
  if (!app.hasDecorator('keyring')) throw new Error('A shared rate-limit store needs the keyring plugin registered first');
  const keyring: Keyring = app.keyring;
  const secret = createHmac('sha256', keyring.keys.get(keyring.currentId)!).update('sightline:rate-limit-key:v1').digest();
  return (key) => createHmac('sha256', secret).update(key).digest('base64url').slice(0, 22);
}

interface WaitingHit {
  resolve: (counter: Counter) => void;
  reject: (error: unknown) => void;
}

/**
 * PostgreSQL: one upsert per turn of the event loop for every hit asked in it (a round trip per
 * request was the largest cost of an admin read). Each hit is still counted after its request
 * arrived, and each caller gets its own place in the count.
 */
function postgresCounting(app: FastifyInstance): Counting {
  const db: Kysely<Database> = app.db.kysely;
  let nextSweep = Date.now() + SWEEP_INTERVAL_MS;
  let sweeping: Promise<unknown> | null = null;
  let batch = new Map<string, { windowMs: number; waiting: WaitingHit[] }>();
  app.addHook('onClose', async () => {
    nextSweep = Infinity;
    await sweeping;
  });

  const run = async (hits: typeof batch) => {
    // Expired rows only cost space (a hit on one starts a new window), so they go from time to
    // time, after a hit rather than on a timer: an idle instance never touches the table.
    if (Date.now() >= nextSweep) {
      nextSweep = Date.now() + SWEEP_INTERVAL_MS;
      sweeping = db.executeQuery(PG_SWEEP).catch(() => {}); // the next sweep retries
    }
    const keys = [...hits.keys()].sort();
    try {
      const { rows } = await db.executeQuery(
        CompiledQuery.raw(PG_HITS, [keys, keys.map((key) => hits.get(key)!.waiting.length), keys.map((key) => hits.get(key)!.windowMs)]) as CompiledQuery<{
          key: string;
          count: number;
          ttl: number;
        }>,
      );
      for (const row of rows) {
        const { waiting } = hits.get(row.key)!;
        hits.delete(row.key);
        const first = row.count - waiting.length + 1;
        waiting.forEach((hit, i) => hit.resolve({ current: first + i, ttl: row.ttl }));
      }
      if (hits.size > 0) throw new Error('the rate-limit upsert returned fewer keys than it was given');
    } catch (error) {
      for (const { waiting } of hits.values()) for (const hit of waiting) hit.reject(error);
    }
  };

  return {
    hit(key, timeWindow) {
      return new Promise<Counter>((resolve, reject) => {
        if (batch.size === 0) {
          setImmediate(() => {
            const hits = batch;
            batch = new Map();
            void run(hits);
          });
        }
        const entry = batch.get(key);
        if (entry) entry.waiting.push({ resolve, reject });
        else batch.set(key, { windowMs: timeWindow, waiting: [{ resolve, reject }] });
      });
    },
  };
}

/** How many keys the in-process counters keep; the least recently counted goes first. */
const MEMORY_KEYS = 10_000;

function memoryCounting(): Counting {
  const windows = new LRUCache<string, { count: number; resetAt: number }>({ max: MEMORY_KEYS });
  return {
    async hit(key, timeWindow) {
      const now = Date.now();
      let window = windows.get(key);
      if (!window || window.resetAt <= now) {
        window = { count: 0, resetAt: now + timeWindow };
        windows.set(key, window);
      }
      window.count++;
      return { current: window.count, ttl: window.resetAt - now };
    },
  };
}

/** Logs an outage once at warn, and its end once at info. */
function outageLog(log: FastifyBaseLogger) {
  let down = false;
  return {
    failed(error: Error) {
      if (down) return;
      down = true;
      log.warn({ error: error.message }, 'rate limits: Redis does not answer; requests go through without a limit until it does');
    },
    answered() {
      if (!down) return;
      down = false;
      log.info('rate limits: Redis answers again');
    },
  };
}

async function redisCounting(app: FastifyInstance, url: string, keyPrefix: string): Promise<Counting> {
  // Loaded only when REDIS_URL is set (ioredis takes about 50 ms to load).
  const [{ Redis }, { default: RedisStore }] = await Promise.all([import('ioredis'), import('@fastify/rate-limit/store/RedisStore.js')]);
  const log = app.log.child({ component: 'rate-limit' });
  const outage = outageLog(log);
  const redis = new Redis(url, {
    // While the connection is down a command fails at once (the request goes through) instead
    // of waiting in a queue; a Redis that stops answering costs a request at most the timeout.
    enableOfflineQueue: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', (error: Error) => outage.failed(error));
  redis.on('ready', () => outage.answered());
  const store = new RedisStore(false, false, redis, `${keyPrefix}rate-limit:`);

  app.addHook('onReady', async () => {
    // The first requests find the connection open, unless Redis is down: then start anyway.
    const connected =
      redis.status === 'ready' ||
      (await new Promise<boolean>((resolve) => {
        const done = (ready: boolean) => () => {
          clearTimeout(timer);
          redis.off('ready', onReady).off('error', onError);
          resolve(ready);
        };
        const onReady = done(true);
        const onError = done(false);
        const timer = setTimeout(onError, REDIS_CONNECT_TIMEOUT_MS);
        redis.once('ready', onReady).once('error', onError);
      }));
    if (connected) log.info({ redis: `${redis.options.host}:${redis.options.port}` }, 'rate limits: shared through Redis');
  });
  app.addHook('onClose', async () => redis.disconnect());

  return {
    hit: (key, timeWindow, max) =>
      new Promise((resolve, reject) => {
        store.incr(
          key,
          (error, counter) => {
            if (error || !counter) {
              const failure = error ?? new Error('Redis answered nothing');
              outage.failed(failure);
              reject(failure);
              return;
            }
            outage.answered();
            resolve(counter);
          },
          timeWindow,
          max,
        );
      }),
  };
}

/** Which store counts this app's rate limits. */
export function rateLimitStoreKind(app: FastifyInstance): RateLimitStoreKind {
  if (app.config.redisUrl) return 'redis';
  return app.db.engine === 'postgres' ? 'postgres' : 'memory';
}

/**
 * The options of @fastify/rate-limit's registration that pick its store (and how a store failure
 * is met); hooks on `app` connect and close what the store needs.
 */
export async function rateLimitStoreOptions(app: FastifyInstance): Promise<Pick<RateLimitPluginOptions, 'store' | 'skipOnError'>> {
  const kind = rateLimitStoreKind(app);
  if (kind === 'memory') return { store: storeClass(new SharedStore(memoryCounting(), (key) => key)), skipOnError: false };
  const digest = keyDigest(app);
  if (kind === 'redis') {
    const counting = await redisCounting(app, app.config.redisUrl!, app.config.redisKeyPrefix);
    return { store: storeClass(new SharedStore(counting, digest)), skipOnError: true };
  }
  return { store: storeClass(new SharedStore(postgresCounting(app), digest)), skipOnError: false };
}
