// @fastify/rate-limit's built-in Redis store (one Lua script per hit: INCR, then PEXPIRE on a new
// window), which the package ships without a type declaration of its own.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis';

  class RedisStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string);
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number,
    ): void;
  }
  export default RedisStore;
}
