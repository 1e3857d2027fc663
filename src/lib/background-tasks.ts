/**
 * Work started by a request that its answer must not wait for (so the answer's timing says
 * nothing about it), tracked so that closing the server waits for it. A failure is reported to
 * `onError` and goes no further: the request that started the task has already been answered.
 */
export class BackgroundTasks {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly onError: (error: unknown, name: string) => void) {}

  /** Starts `task` on a later turn of the event loop, after the current answer is written. */
  run(name: string, task: () => Promise<void>): void {
    const started = new Promise<void>((resolve) => setImmediate(resolve))
      .then(task)
      .catch((error: unknown) => this.onError(error, name))
      .finally(() => this.running.delete(started));
    this.running.add(started);
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves when every task started so far, and any they started, has ended. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
