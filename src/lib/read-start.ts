import { AsyncLocalStorage } from 'node:async_hooks';

// The analytics read under way, for the work it calls: its start (performance.now()), the instant
// before which every committed event must be in its answer (its arrival, less the lag reads are
// allowed: src/plugins/analytics-reads.ts), not the events committed while it runs, so each of its
// steps can share whatever brought the derived data up to that moment
// (src/modules/analytics/backlog-settles.ts); and whether it stopped waiting for them
// (`waitAtMost`), so that its answer can say it may leave some of them out.

interface ReadUnderWay {
  startedAt: number;
  behind: boolean;
}

const readUnderWay = new AsyncLocalStorage<ReadUnderWay>();

/** What `withReadStart` learned of the read once it ended. */
export interface ReadOutcome<T> {
  value: T;
  /** A wait for the events committed before it was cut short: the newest of them may be missing. */
  behind: boolean;
}

/** Runs `read` with its start time (by default now) known to what it calls. */
export async function withReadStart<T>(read: () => Promise<T>, startedAt = performance.now()): Promise<ReadOutcome<T>> {
  const state: ReadUnderWay = { startedAt, behind: false };
  const value = await readUnderWay.run(state, read);
  return { value, behind: state.behind };
}

/** The start of the read under way, or now outside one. */
export function currentReadStart(): number {
  return readUnderWay.getStore()?.startedAt ?? performance.now();
}

/**
 * Waits for `work` (bringing the derived data up to the read's start) at most `ms` (null: as long
 * as it takes). Past that the read goes on without it and is marked behind; the work goes on for
 * the reads after it, and its failure then is theirs to see, not this one's. A read waits so once:
 * the later steps of a read already behind go on at once.
 */
export function waitAtMost(work: Promise<void>, ms: number | null): Promise<void> {
  if (ms === null) return work;
  const read = readUnderWay.getStore();
  // A read already behind does not wait again at its next step (each store call of a read settles).
  if (read?.behind) {
    work.catch(() => {});
    return Promise.resolve();
  }
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      if (read) read.behind = true;
      resolve();
    }, ms);
  });
  work.catch(() => {}); // once cut, nobody awaits it here
  return Promise.race([work, cut]).finally(() => clearTimeout(timer));
}
