import { describe, expect, it } from 'vitest';
import { BackgroundTasks } from '../src/lib/background-tasks.ts';

describe('BackgroundTasks', () => {
  it('starts a task after the current turn, and drain waits for it and for tasks it starts', async () => {
    const done: string[] = [];
    const tasks = new BackgroundTasks(() => {});
    tasks.run('outer', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done.push('outer');
      tasks.run('inner', async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        done.push('inner');
      });
    });
    expect(done).toEqual([]);
    expect(tasks.size).toBe(1);
    await Promise.resolve();
    expect(done).toEqual([]); // not run on this turn's microtasks either
    await tasks.drain();
    expect(done).toEqual(['outer', 'inner']);
    expect(tasks.size).toBe(0);
  });

  it('reports a failure with the task name and goes on', async () => {
    const failures: [string, string][] = [];
    const tasks = new BackgroundTasks((error, name) => failures.push([name, (error as Error).message]));
    tasks.run('breaks', async () => {
      throw new Error('database refused');
    });
    let ran = false;
    tasks.run('works', async () => {
      ran = true;
    });
    await tasks.drain();
    expect(failures).toEqual([['breaks', 'database refused']]);
    expect(ran).toBe(true);
  });
});
