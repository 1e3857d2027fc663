import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { ChildLoggerOptions } from 'fastify/types/logger.js';
import { redactText, redactUrl } from './redaction.ts';

// Secrets never reach a log line: the credential headers are redacted, a URL is logged without
// its query values and with credential-shaped path segments masked (see redaction.ts), and
// free-text messages (some of Fastify's quote the request URL) go through the same masking.

export const REDACT_PATHS = ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.key', '*.password'];

/** The request as the log shows it. */
export function describeRequest(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url), host: request.host, remoteAddress: request.ip };
}

/** The same without the client address, for routes whose visitors' addresses stay out of logs. */
export function describeRequestWithoutAddress(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url) };
}

interface DescribedError {
  type: string;
  message: string;
  stack: string;
  [field: string]: unknown;
}

/** pino's error shape (type, message, stack, own fields, cause), its text masked. */
export function describeError(error: unknown, depth = 0): DescribedError {
  if (!(error instanceof Error)) return { type: typeof error, message: redactText(String(error)), stack: '' };
  const described: DescribedError = {
    type: error.constructor?.name ?? 'Error',
    message: redactText(error.message),
    stack: redactText(error.stack ?? ''),
  };
  for (const [name, value] of Object.entries(error)) {
    if (name in described || value === undefined) continue;
    described[name] = typeof value === 'string' ? redactText(value) : value;
  }
  if (error.cause !== undefined && depth < 3) described.cause = describeError(error.cause, depth + 1);
  return described;
}

export function loggerOptions(level: string, stream?: { write(line: string): void }) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: describeRequest, err: describeError },
    hooks: {
      // The message of every call and its %s arguments, e.g. Fastify's "Reply was already sent
      // ... in the "<url>" route".
      logMethod(this: unknown, args: unknown[], method: (...args: unknown[]) => void) {
        for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = redactText(args[i] as string);
        return method.apply(this, args);
      },
    },
    ...(stream ? { stream } : {}),
  };
}

type Bindings = Record<string, unknown>;
type LevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
type Logger = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean; levels?: { values: Record<string, number> } };

/**
 * Fastify's per-request logger, made only when the request logs something. Fastify makes a pino
 * child (bindings: the request id) for every request, and with redaction and serializers that
 * cost about a quarter of a fast route's time (35 us of 140 us on an admin read); most requests
 * log nothing at the default level.
 */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const logger = parent as Logger;
  if (typeof logger.isLevelEnabled !== 'function' || !logger.levels) return parent.child(bindings, options);
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}

class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.made?.level ?? (this.options.level as string | undefined) ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  private real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  private enabled(level: LevelName): boolean {
    const values = this.parent.levels!.values;
    return values[level]! >= (values[this.level] ?? 0);
  }

  isLevelEnabled(level: LevelName): boolean {
    return this.enabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  silent(): void {}

  /** Writes only when the level is on, making the child logger on the first write. */
  private write(level: LevelName, args: unknown[]): void {
    if (this.enabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
}
