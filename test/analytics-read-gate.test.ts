import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.ts';
import { useTestApp } from './helpers/app.ts';

// Analytics reads run a few at a time, so long ones cannot take every core; a long queue is
// refused with 503 and Retry-After instead of piling up.

/** The reads here are of no website (nothing to settle) and never wait for a backlog, so nothing is said on their replies. */
const reply = { header: () => reply, request: { routeOptions: { url: '/test' } } } as unknown as FastifyReply;

describe('analytics read gate', () => {
  const t = useTestApp('sqlite', { analyticsReadConcurrency: 2 });

  it('runs at most the configured number of reads at once, the others in turn', async () => {
    let running = 0;
    let most = 0;
    const read = () =>
      t.app.analyticsRead(reply, async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return 'done';
      });
    expect(await Promise.all(Array.from({ length: 10 }, read))).toEqual(Array(10).fill('done'));
    expect(most).toBe(2);
  });

  it('refuses a read with 503 and Retry-After when 64 already wait', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting = Array.from({ length: 64 }, () => t.app.analyticsRead(reply, () => gate));
    let refused: unknown;
    try {
      await t.app.analyticsRead(reply, async () => 'never');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ statusCode: 503, retryAfterSeconds: 2 });
    release();
    await Promise.all(waiting);
  });
});
