import type { FastifyRequest } from 'fastify';
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
