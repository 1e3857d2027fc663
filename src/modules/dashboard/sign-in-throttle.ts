import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../../errors.ts';
import { normaliseEmail } from '../../lib/formats.ts';

// Password guessing is throttled per e-mail address (one account's password) and per client
// address (many accounts from one place), counting every attempt, with the rate limiter the
// route guard registers, whose counters every instance shares (src/http/rate-limit-store.ts).
// Runs as a preHandler: the body is parsed.

export function signInThrottles(app: FastifyInstance): { perAccount: preHandlerAsyncHookHandler; perAddress: preHandlerAsyncHookHandler } {
  const { perAccount, perAddress, windowMs } = app.config.signInLimit;
  const email = (request: FastifyRequest) => {
    const value = (request.body as { email?: unknown } | undefined)?.email;
    return typeof value === 'string' ? (normaliseEmail(value) ?? value.slice(0, 254)) : '';
  };
  const throttle = (max: number, key: (request: FastifyRequest) => string): preHandlerAsyncHookHandler => {
    const limiter = app.createRateLimit({ keyGenerator: key, max, timeWindow: windowMs });
    return async (request, reply) => {
      const outcome = await limiter(request);
      if (outcome.isAllowed || !outcome.isExceeded) return;
      reply.header('retry-after', String(outcome.ttlInSeconds));
      throw new AppError(429, `Too many attempts: at most ${max} per ${windowMs / 60_000} minutes; retry in ${outcome.ttlInSeconds} s`);
    };
  };
  return {
    perAccount: throttle(perAccount, (request) => `sign-in-account:${email(request)}`),
    perAddress: throttle(perAddress, (request) => `sign-in-address:${request.ip}`),
  };
}
