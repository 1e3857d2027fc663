// The shape the server's background workers share: their work is rows in the database, so they
// run it when woken (a request just queued some) and every `pollMs` besides (work another
// instance queued or left behind), one run at a time; a wake during a run runs it once more
// after. `run` handles its own failures: it must not reject.

export class WakeLoop {
  private running: Promise<void> | null = null;
  private again = false;
  private poll: NodeJS.Timeout | null = null;
  private stopped = true;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly pollMs: number,
  ) {}

  /** Between halt() and the next start(), and before the first: runs should end early. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Starts polling (again, after a halt) and runs at once; does nothing while it already polls. */
  start(): void {
    if (this.poll) return;
    this.stopped = false;
    this.poll = setInterval(() => this.wake(), this.pollMs);
    this.poll.unref();
    this.wake();
  }

  /** Runs now, or once more after the run under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Stops polling and waking; the run under way goes on (idle() waits for it). */
  halt(): void {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
  }

  /** Resolves once no run is under way. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }
}
