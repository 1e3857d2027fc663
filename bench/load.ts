import autocannon from 'autocannon';
import { cpuTimeMs } from './children.ts';

// One autocannon run (in this process) against a URL, after a warm-up whose numbers are
// discarded but whose failures still count. Latencies are collected from autocannon's
// 'response' events, because its own histogram keeps whole milliseconds only.

export interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Server CPU time per request during the measured run (robust on a busy machine). */
  serverCpuUsPerRequest: number | null;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** The server's process id, to read its CPU time. */
  serverPid?: number;
  /** POST with a body made per request (default: GET without a body). */
  body?: () => string;
  /** POST with a body and headers made per request (instead of `body`). */
  request?: () => { body: string; headers: Record<string, string> };
  /** Ends the measured run early when it resolves. */
  until?: Promise<unknown>;
}

function run(options: LoadOptions, seconds: number, latencies: number[], until?: Promise<unknown>): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const makeBody = options.body;
    const makeRequest = options.request;
    const setup = makeRequest
      ? (request: autocannon.Request) => {
          const made = makeRequest();
          return { ...request, body: made.body, headers: { ...request.headers, ...made.headers } };
        }
      : makeBody
        ? (request: autocannon.Request) => ({ ...request, body: makeBody() })
        : null;
    const instance = autocannon(
      {
        url: options.url,
        headers: options.headers,
        connections: options.connections,
        duration: seconds,
        ...(setup ? { method: 'POST' as const, requests: [{ setupRequest: setup }] } : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('response', (_client, _statusCode, _bytes, responseTime: number) => void latencies.push(responseTime));
    void until?.then(() => instance.stop());
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const warmup = options.warmupSeconds > 0 ? await run(options, options.warmupSeconds, []) : undefined;
  const latencies: number[] = [];
  const cpuBefore = cpuTimeMs(options.serverPid);
  const result = await run(options, options.seconds, latencies, options.until);
  const cpuAfter = cpuTimeMs(options.serverPid);
  const sorted = Float64Array.from(latencies).sort();
  return {
    reqPerSec: result.requests.average,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    requests: result.requests.total,
    non2xx: result.non2xx + (warmup?.non2xx ?? 0),
    errors: result.errors + (warmup?.errors ?? 0),
    timeouts: result.timeouts + (warmup?.timeouts ?? 0),
    serverCpuUsPerRequest:
      cpuBefore === null || cpuAfter === null || result.requests.total === 0 ? null : ((cpuAfter - cpuBefore) * 1000) / result.requests.total,
  };
}

export function failures(result: LoadResult): number {
  return result.non2xx + result.errors;
}
