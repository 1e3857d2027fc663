import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE_MESSAGE, describeFault, isDatabaseUnavailable } from '../db/faults.ts';
import { AppError, type ErrorDetail } from '../errors.ts';
import { redactPath } from '../http/redaction.ts';
import { describeValidationErrors } from '../http/validation.ts';

// One place turns every failure into the contract's error envelope. 5xx details stay in the log
// (with the request id); the client sees a plain sentence and the id to quote.

const CONTEXT_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

interface Mapped {
  statusCode: number;
  message: string;
  details?: ErrorDetail[];
  /** Sent as the Retry-After header (seconds). */
  retryAfterSeconds?: number;
}

function mapFastifyError(error: FastifyError): Mapped | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, message: 'The body must be JSON, sent with Content-Type: application/json' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, message: 'The body is too large for this route' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { statusCode: 400, message: 'Content-Length does not match the body' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, message: 'The body is empty; send a JSON object' };
    case 'FST_ERR_BAD_URL':
      return { statusCode: 400, message: 'The URL is malformed (check its %-escapes)' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { statusCode: 400, message: 'A path parameter is too long; ids are 24 hex characters' };
    default:
      return null;
  }
}

export function toErrorResponse(error: FastifyError | AppError | Error): Mapped {
  if (error instanceof AppError) {
    return { statusCode: error.statusCode, message: error.message, details: error.details, retryAfterSeconds: error.retryAfterSeconds };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const context = CONTEXT_NAMES[fastifyError.validationContext ?? 'body'] ?? 'body';
    const details = describeValidationErrors(context, fastifyError.validation as never);
    const message = details.map((d) => `${d.path}: ${d.message}`).join('; ');
    return { statusCode: 400, message, details };
  }
  const mapped = mapFastifyError(fastifyError);
  if (mapped) return mapped;
  // An outage, not a bug: the client should retry, and the log says why without a stack trace.
  if (isDatabaseUnavailable(error)) {
    return { statusCode: 503, message: DATABASE_UNAVAILABLE_MESSAGE, retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS };
  }
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    if (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return { statusCode: 400, message: 'The body is not valid JSON' };
    }
    return { statusCode: fastifyError.statusCode, message: fastifyError.message };
  }
  return { statusCode: 500, message: 'Internal server error' };
}

export function sendError(reply: FastifyReply, request: FastifyRequest, mapped: Mapped): FastifyReply {
  if (mapped.statusCode === 401) reply.header('WWW-Authenticate', 'Bearer realm="sightline"');
  if (mapped.retryAfterSeconds !== undefined) reply.header('Retry-After', String(mapped.retryAfterSeconds));
  return reply.code(mapped.statusCode).type('application/json').send({
    status: 'error',
    error: {
      code: mapped.statusCode,
      message: mapped.message,
      ...(mapped.details ? { details: mapped.details } : {}),
      requestId: request.id,
    },
  });
}

async function errorHandler(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const mapped = toErrorResponse(error);
    if (mapped.statusCode === 503 && error instanceof AppError) request.log.warn({ code: 503, reason: mapped.message }, 'request refused: busy');
    else if (mapped.statusCode === 503) request.log.warn({ code: 503, fault: describeFault(error) }, 'request refused: database unavailable');
    else if (mapped.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: mapped.statusCode, reason: mapped.message }, 'request refused');
    return sendError(reply, request, mapped);
  });

  // A browser opening an unknown page gets the dashboard's own "Not found" (dashboard-pages.ts).
  // Otherwise the path is echoed to help a client find its typo, but never a credential pasted into it.
  app.setNotFoundHandler(
    (request, reply) =>
      (request.server.hasDecorator('dashboardNotFound') ? request.server.dashboardNotFound(request, reply) : null) ??
      sendError(reply, request, { statusCode: 404, message: `No route ${request.method} ${redactPath(request.url.split(/[?#]/)[0]!)}` }),
  );
}

export default fp(errorHandler, { name: 'error-handler' });
