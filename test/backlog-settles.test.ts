import { describe, expect, it } from 'vitest';
import { BacklogSettles } from '../src/modules/analytics/backlog-settles.ts';
import { withReadStart } from '../src/lib/read-start.ts';

// The reads of a website share the settles of its backlog (issue 38): a read is served by a settle
// that began at or after it did, never by one that began before (which may have missed its events).

interface Started {
  began: number;
  finish: () => void;
  fail: (error: Error) => void;
}

function harness() {
  const started: Started[] = [];
  const settles = new BacklogSettles(
    () =>
      new Promise<void>((resolve, reject) => {
        started.push({ began: performance.now(), finish: resolve, fail: reject });
      }),
  );
  return { settles, started };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const state = (promise: Promise<unknown>) => {
  const seen = { value: 'pending' as 'pending' | 'resolved' | 'rejected' };
  promise.then(
    () => (seen.value = 'resolved'),
    () => (seen.value = 'rejected'),
  );
  return seen;
};

describe('backlog settles shared among reads', () => {
  it('reads arriving during a settle share the next one, which begins after them', async () => {
    const { settles, started } = harness();
    const first = state(settles.settle('w'));
    expect(started).toHaveLength(1);
    const arrivedAt = performance.now();
    const second = state(settles.settle('w'));
    const third = state(settles.settle('w'));
    await tick();
    expect(started).toHaveLength(1);
    started[0]!.finish();
    await tick();
    expect(first.value).toBe('resolved');
    // The first settle may have read the backlog before their events: they wait for another.
    expect(second.value).toBe('pending');
    expect(started).toHaveLength(2);
    expect(started[1]!.began).toBeGreaterThanOrEqual(arrivedAt);
    started[1]!.finish();
    await tick();
    expect([second.value, third.value]).toEqual(['resolved', 'resolved']);
    expect(started).toHaveLength(2);
  });

  it('a read that began before a settle began is served by it, running or done; a later one is not', async () => {
    const { settles, started } = harness();
    await withReadStart(async () => {
      const readBegan = performance.now();
      const running = state(settles.settle('w'));
      expect(started[0]!.began).toBeGreaterThanOrEqual(readBegan);
      // Another store call of the same read joins the settle under way.
      const again = state(settles.settle('w'));
      started[0]!.finish();
      await tick();
      expect([running.value, again.value]).toEqual(['resolved', 'resolved']);
      // And once it is done, needs none.
      await settles.settle('w');
      expect(started).toHaveLength(1);
    });
    // A read that begins now needs a settle of its own.
    const later = state(settles.settle('w'));
    expect(started).toHaveLength(2);
    started[1]!.finish();
    await tick();
    expect(later.value).toBe('resolved');
  });

  it('a failed settle fails its own reads, and the queued one still runs', async () => {
    const { settles, started } = harness();
    const first = state(settles.settle('w'));
    const queued = state(settles.settle('w'));
    started[0]!.fail(new Error('database unavailable'));
    await tick();
    expect(first.value).toBe('rejected');
    expect(queued.value).toBe('pending');
    expect(started).toHaveLength(2);
    started[1]!.finish();
    await tick();
    expect(queued.value).toBe('resolved');
    // A failed settle serves no later read.
    const after = state(settles.settle('w'));
    expect(after.value).toBe('pending');
    expect(started).toHaveLength(3);
    started[2]!.finish();
    await tick();
  });

  it('keeps websites apart', async () => {
    const { settles, started } = harness();
    const a = state(settles.settle('a'));
    const b = state(settles.settle('b'));
    expect(started).toHaveLength(2);
    started[1]!.finish();
    await tick();
    expect([a.value, b.value]).toEqual(['pending', 'resolved']);
    started[0]!.finish();
    await tick();
    expect(a.value).toBe('resolved');
  });
});
