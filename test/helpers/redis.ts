import { Redis } from 'ioredis';

// Redis for the tests of what several instances share (REDIS_URL). Where it does not answer, those
// tests are reported as skipped with the reason, unless SIGHTLINE_REQUIRE_REDIS=1 (CI sets it),
// in which case the run fails instead of skipping: as PostgreSQL in engines.ts.

export const REDIS_URL = process.env.SIGHTLINE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const REQUIRE_REDIS = process.env.SIGHTLINE_REQUIRE_REDIS === '1';

/** A client that fails fast instead of retrying (tests want an answer or an error). */
export function testRedisClient(): Redis {
  return new Redis(REDIS_URL, { connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
}

async function probeRedis(): Promise<string | null> {
  const client = testRedisClient();
  // The connection's own error (ECONNREFUSED...) says more than the failed command's.
  let connectionError: Error | undefined;
  client.on('error', (error: Error) => (connectionError = error));
  try {
    await client.connect();
    const answer = await client.ping();
    return answer === 'PONG' ? null : `PING answered ${answer}`;
  } catch (error) {
    return (connectionError ?? (error as Error)).message;
  } finally {
    client.disconnect();
  }
}

/** Why Redis cannot be used here, or null when it can. */
export const redisProblem = await probeRedis();
if (redisProblem && REQUIRE_REDIS) {
  throw new Error(`SIGHTLINE_REQUIRE_REDIS=1 but Redis at ${REDIS_URL} does not answer: ${redisProblem}`);
}
