import pgListen, { type Subscriber } from 'pg-listen';
import type { FastifyBaseLogger } from 'fastify';

// A PostgreSQL LISTEN subscription that tells whether it is hearing: pg-listen keeps one
// connection, reconnects it with a growing delay, and LISTENs again; until it has, `hearing` is
// false and whoever relies on the notifications must not trust what it cached.

export interface Subscription {
  /** Connected and listening: every notification since the last reconnection has arrived. */
  readonly hearing: boolean;
  close(): Promise<void>;
}

export interface SubscriptionHandlers {
  onNotification(payload: string): void;
  /** Connected again after a gap in which notifications may have been missed. */
  onResumed(): void;
  log?: FastifyBaseLogger;
}

/** How often the listening connection is checked with a trivial query (a silent loss shows up). */
// A CommonJS module whose function is its `default` export.
const createSubscriber = pgListen.default;

const CHECK_INTERVAL_MS = 5_000;
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 5_000;

const retryDelay = (attempt: number) => Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(attempt, 10));

export function subscribe(connectionString: string, channel: string, handlers: SubscriptionHandlers): Subscription {
  let current: Subscriber | undefined;
  let hearing = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const lost = () => {
    if (hearing) handlers.log?.warn({ channel }, 'lost the PostgreSQL notification connection; reconnecting');
    hearing = false;
  };
  const resumed = () => {
    if (closed) return;
    hearing = true;
    handlers.onResumed();
  };

  // pg-listen reconnects a lost connection and LISTENs again, but not a first connection that
  // failed, nor one whose LISTEN failed after reconnecting: those start over with a new one.
  const open = (attempt: number) => {
    if (closed) return;
    const subscriber = createSubscriber(
      { connectionString, application_name: 'sightline-listen' },
      { paranoidChecking: CHECK_INTERVAL_MS, retryInterval: retryDelay, retryLimit: Infinity, retryTimeout: 0, parse: (text) => text },
    );
    current = subscriber;
    let listening = false;
    const restart = () => {
      lost();
      void subscriber.close().catch(() => {});
      if (!closed) retry = setTimeout(() => open(attempt + 1), retryDelay(attempt)).unref();
    };
    subscriber.events.on('notification', ({ channel: heard, payload }) => {
      if (heard === channel) handlers.onNotification(String(payload ?? ''));
    });
    subscriber.events.on('reconnect', lost);
    // Emitted after the LISTEN on a reconnection; on the first one, before it (hence `listening`).
    subscriber.events.on('connected', () => {
      if (listening) resumed();
    });
    subscriber.events.on('error', (error) => {
      handlers.log?.error({ channel, err: error.message }, 'PostgreSQL notifications stopped; starting over');
      if (listening) restart();
    });
    // Queued on the client until it connects, so reconnections LISTEN to it too.
    const listen: Promise<unknown> = subscriber.listenTo(channel) ?? Promise.resolve();
    listen.catch(() => {});
    subscriber
      .connect()
      .then(() => listen)
      .then(() => {
        listening = true;
        resumed();
      })
      .catch(restart);
  };
  open(0);

  return {
    get hearing() {
      return hearing && !closed;
    },
    async close() {
      closed = true;
      hearing = false;
      clearTimeout(retry);
      await current?.close().catch(() => {});
    },
  };
}
