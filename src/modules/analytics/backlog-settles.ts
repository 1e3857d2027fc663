import { currentReadStart } from '../../lib/read-start.ts';

// A website's settles (rollup-backlog.ts: folding in its waiting events before its derived data is
// read) shared among the reads that need the same one. A read needs the events committed before it
// began, so a settle that began at or after that moment serves it; one that began earlier may have
// read the backlog before the read's events were there, so the read waits for the next one, which
// every read arriving meanwhile shares. Without this, each read of a busy website paid a fold of
// its own, and each of the store calls one read makes paid another (on PostgreSQL about 0.1-0.3 s a
// fold, one analytics read at a time: the soak's reads queued 20 s and were refused).

interface Flight {
  /** When it began (performance.now()). */
  began: number;
  done: Promise<void>;
}

export class BacklogSettles {
  /** Per website: the settle under way, and the one queued behind it. */
  private readonly flights = new Map<string, { running: Flight; queued: Promise<void> | null }>();
  /** Per website: when the last settle that ended well began. */
  private readonly settledFrom = new Map<string, number>();

  constructor(private readonly settleNow: (websiteId: string) => Promise<void>) {}

  /** Resolves once the events committed before the read under way began (or before now) are derived. */
  settle(websiteId: string): Promise<void> {
    const since = currentReadStart();
    if ((this.settledFrom.get(websiteId) ?? Number.NEGATIVE_INFINITY) >= since) return Promise.resolve();
    const flight = this.flights.get(websiteId);
    if (!flight) return this.start(websiteId).done;
    if (flight.running.began >= since) return flight.running.done;
    flight.queued ??= flight.running.done.then(
      () => this.next(websiteId),
      () => this.next(websiteId),
    );
    return flight.queued;
  }

  /**
   * Every event of the website committed before `began` is derived (the background deriver's fold
   * took them all): reads that need no more are served without a settle of their own.
   */
  derivedFrom(websiteId: string, began: number): void {
    if ((this.settledFrom.get(websiteId) ?? Number.NEGATIVE_INFINITY) < began) this.settledFrom.set(websiteId, began);
  }

  private next(websiteId: string): Promise<void> {
    const flight = this.flights.get(websiteId)!;
    flight.queued = null;
    return this.start(websiteId, flight).done;
  }

  private start(websiteId: string, flight?: { running: Flight; queued: Promise<void> | null }): Flight {
    const began = performance.now();
    const running: Flight = { began, done: Promise.resolve() };
    running.done = this.settleNow(websiteId).then(
      () => {
        this.derivedFrom(websiteId, began);
        this.end(websiteId, running);
      },
      (error: unknown) => {
        this.end(websiteId, running);
        throw error;
      },
    );
    if (flight) flight.running = running;
    else this.flights.set(websiteId, { running, queued: null });
    return running;
  }

  /** The flight ended: the website's entry goes unless a settle is queued behind it. */
  private end(websiteId: string, running: Flight): void {
    const flight = this.flights.get(websiteId);
    if (flight?.running === running && flight.queued === null) this.flights.delete(websiteId);
  }
}
