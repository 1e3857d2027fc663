import http from 'node:http';
import type { Answer, SoakRequest } from './soak-mix.ts';

// Open loop: request n is due at start + n / rate, whatever happened to the requests before it
// (a closed loop, where a client waits for an answer before its next request, sends less while
// the server stalls and so hides the stall: coordinated omission). autocannon's overallRate is
// not this: each connection still waits for its answer, and a per-second quota lets requests
// go in bursts at the start of each second. A timer wakes at the next due time and sends every
// request due by then; how late each went out is its send lag, which the summary reports, since
// a client that falls behind would flatter the server.

export const REQUEST_TIMEOUT_MS = 30_000;

/** The requests of one pass over the mix, spread evenly: smooth weighted round-robin (nginx's), so every 10-s window gets its share. */
export function spreadDeck(weights: number[]): number[] {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const current = weights.map(() => 0);
  const deck: number[] = [];
  for (let turn = 0; turn < total; turn++) {
    let best = 0;
    for (let i = 0; i < weights.length; i++) {
      current[i]! += weights[i]!;
      if (current[i]! > current[best]!) best = i;
    }
    current[best]! -= total;
    deck.push(best);
  }
  return deck;
}

export interface OpenLoopOptions {
  rate: number;
  /** How many requests to send (the run's seconds times the rate). */
  slots: number;
  /** performance.now() of slot 0. */
  start: number;
  /** Sends slot `slot`, due at `dueAt` (performance.now() time), `lagMs` late. */
  send(slot: number, dueAt: number, lagMs: number): void;
  /** Stop early (Ctrl-C) when this returns true. */
  stopped(): boolean;
}

/** Resolves once every slot was sent (or the run was stopped); does not wait for answers. */
export function openLoop(options: OpenLoopOptions): Promise<number> {
  const interval = 1000 / options.rate;
  let next = 0;
  return new Promise((done) => {
    const tick = () => {
      const now = performance.now();
      while (next < options.slots && options.start + next * interval <= now) {
        const dueAt = options.start + next * interval;
        options.send(next, dueAt, now - dueAt);
        next += 1;
      }
      if (next >= options.slots || options.stopped()) {
        done(next);
        return;
      }
      setTimeout(tick, Math.max(0, options.start + next * interval - performance.now()));
    };
    setTimeout(tick, Math.max(0, options.start - performance.now()));
  });
}

/** Keep-alive connections to the server, as many as the requests in flight need. */
export const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** One request on loopback; rejects on a connection error or after REQUEST_TIMEOUT_MS. */
export function exchange(port: number, request: SoakRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = request.body === undefined ? request.headers : { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) };
    const outgoing = http.request({ agent, host: '127.0.0.1', port, method: request.method, path: request.path, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      if (request.readBody) incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      else incoming.resume();
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks), headers: incoming.headers }));
      incoming.on('error', reject);
    });
    outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
