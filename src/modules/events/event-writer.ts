import type { Kysely } from 'kysely';
import { isDatabaseUnavailable } from '../../db/faults.ts';
import type { Database } from '../../db/schema.ts';
import type { EventEffectsConfig, NewEvent, RecordedEvent } from './event.types.ts';
import { recordEvents } from './record-events.ts';

// Group commit: requests that arrive while a transaction is being written wait for the next one,
// so under load many events share one durable commit (on SQLite, one flush of the log, made off
// the event loop), and each request is answered only after the commit that holds its events.
//
// When the database fails under a batch (a dropped connection, a restart), every request of the
// batch is refused (503) and nothing is retried: the COMMIT may have reached the server before the
// connection died, so writing again could store the events twice. A refused event may thus be
// stored; an acknowledged one always is. The next batch starts afresh on a new connection.

interface Pending {
  events: NewEvent[];
  resolve: (recorded: RecordedEvent[]) => void;
  reject: (error: unknown) => void;
}

const MAX_BATCH_EVENTS = 1000;

export class EventWriter {
  private queue: Pending[] = [];
  private running: Promise<void> | null = null;
  private readonly committedListeners: ((recorded: RecordedEvent[]) => void)[] = [];
  private throttle: () => Promise<void> = async () => {};

  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: EventEffectsConfig,
  ) {}

  write(events: NewEvent[]): Promise<RecordedEvent[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.running ??= this.drain();
    });
  }

  /** Called after each commit with the events it held (for example to wake the mail worker). */
  onCommitted(listener: (recorded: RecordedEvent[]) => void): void {
    this.committedListeners.push(listener);
  }

  /** Awaited before each commit: lets what the commits feed (the rollup deriver) hold ingestion back. */
  throttleWith(throttle: () => Promise<void>): void {
    this.throttle = throttle;
  }

  /** Resolves when everything written so far is committed (for a graceful close). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // Let the requests of this tick join the batch.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        await this.throttle();
        await this.writeBatch(this.take());
      }
    } finally {
      this.running = null;
    }
  }

  /** Answers every request of the batch, whatever happens (the writer must never stall). */
  private async writeBatch(batch: Pending[]): Promise<void> {
    let recorded: RecordedEvent[];
    try {
      recorded = await this.commit(batch.flatMap((p) => p.events));
    } catch (error) {
      if (isDatabaseUnavailable(error)) for (const pending of batch) pending.reject(error);
      else await this.writeOneByOne(batch, error);
      return;
    }
    let offset = 0;
    for (const pending of batch) {
      pending.resolve(recorded.slice(offset, offset + pending.events.length));
      offset += pending.events.length;
    }
  }

  private async commit(events: NewEvent[]): Promise<RecordedEvent[]> {
    const recorded = await this.db.transaction().execute((trx) => recordEvents(trx, events, this.effects));
    // The commit stands whatever a listener does: a failing listener must not make it retried.
    for (const listener of this.committedListeners) {
      try {
        listener(recorded);
      } catch {
        // Listeners only wake workers that also poll; nothing is lost.
      }
    }
    return recorded;
  }

  private take(): Pending[] {
    const batch: Pending[] = [];
    let size = 0;
    while (this.queue.length > 0 && (batch.length === 0 || size + this.queue[0]!.events.length <= MAX_BATCH_EVENTS)) {
      const next = this.queue.shift()!;
      size += next.events.length;
      batch.push(next);
    }
    return batch;
  }

  /** One failing request must not fail the others that shared its batch (which was rolled back). */
  private async writeOneByOne(batch: Pending[], batchError: unknown): Promise<void> {
    if (batch.length === 1) {
      batch[0]!.reject(batchError);
      return;
    }
    for (const pending of batch) {
      try {
        pending.resolve(await this.commit(pending.events));
      } catch (error) {
        pending.reject(error);
      }
    }
  }
}
