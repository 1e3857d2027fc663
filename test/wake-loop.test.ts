import { describe, expect, it } from 'vitest';
import { WakeLoop } from '../src/lib/wake-loop.ts';

// The background workers' shared loop (src/lib/wake-loop.ts): one run at a time, a wake during a
// run runs it once more after, nothing runs before start() or after halt().

describe('WakeLoop', () => {
  it('runs once at start, once more for any number of wakes during a run, and not after halt', async () => {
    let runs = 0;
    let release: (() => void) | null = null;
    const loop = new WakeLoop(async () => {
      runs++;
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
    }, 60_000);
    loop.wake();
    expect(runs, 'not before start').toBe(0);
    loop.start();
    expect(runs).toBe(1);
    loop.wake();
    loop.wake();
    loop.wake();
    expect(runs, 'one at a time').toBe(1);
    release!();
    await loop.idle();
    expect(runs, 'the wakes during the run ran it once more').toBe(2);
    loop.halt();
    expect(loop.isStopped).toBe(true);
    loop.wake();
    await loop.idle();
    expect(runs).toBe(2);
    loop.start();
    await loop.idle();
    expect(runs, 'a start after a halt runs again').toBe(3);
    loop.halt();
  });

  it('polls', async () => {
    let runs = 0;
    const loop = new WakeLoop(async () => void runs++, 10);
    loop.start();
    await new Promise((resolve) => setTimeout(resolve, 60));
    loop.halt();
    await loop.idle();
    expect(runs).toBeGreaterThanOrEqual(3);
  });
});
