import type { FastifyRequest } from 'fastify';

// Secrets never reach a log line: the credential headers are redacted, and a credential pasted
// into a URL (say ?access_token=dft_...) is masked before the URL is logged.

export const REDACT_PATHS = ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.key', '*.password'];

const CREDENTIAL_IN_TEXT = /\b(dft?_)[0-9A-Za-z]{36}\b/g;

export function maskCredentials(text: string): string {
  return text.replace(CREDENTIAL_IN_TEXT, '$1[redacted]');
}

export function loggerOptions(level: string, stream?: { write(line: string): void }) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: maskCredentials(request.url),
          host: request.host,
          remoteAddress: request.ip,
        };
      },
    },
    ...(stream ? { stream } : {}),
  };
}
