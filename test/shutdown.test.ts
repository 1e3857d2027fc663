import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  Processes,
  acceptsConnections,
  commandLine,
  descendantPids,
  freePort,
  isRunning,
  sleep,
  waitForHealthy,
} from './helpers/processes.ts';

// Stopping the server: a supervisor sends SIGTERM and expects the process gone soon after, with
// the port free, whatever it started (`npm start`, the command itself) and whatever clients do.

const processes = new Processes();
const scratch = mkdtempSync(join(tmpdir(), 'sightline-npm-start-'));

afterAll(() => {
  processes.killAll();
  rmSync(scratch, { recursive: true, force: true });
});

async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await sleep(100);
  }
  return condition();
}

describe('npm start', () => {
  // `npm start` is how the README (and many process managers) run the server. A supervisor that
  // stops it signals the process it started, npm, and nothing else: the server must stop with it,
  // not keep the port and the database open as an orphan of PID 1.
  it('stops on a SIGTERM sent to npm alone: the port closes and no process is left', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const npm = processes.spawnCommand('npm', ['start'], {
      DATABASE_URL: `sqlite:${join(scratch, 'sightline.db')}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    await waitForHealthy(`http://127.0.0.1:${port}`, npm, 60_000);
    const below = descendantPids(npm.child.pid!);
    expect(below.map(commandLine).some((line) => line.includes('sightline.js serve'))).toBe(true);

    process.kill(npm.child.pid!, 'SIGTERM');

    // npm itself, not `exited`: that waits for stdout to close, which an orphan keeps open.
    const npmExited = await waitUntil(() => !isRunning(npm.child.pid!), 20_000);
    const portClosed = await waitUntil(async () => !(await acceptsConnections(port)), 20_000);
    const leftRunning = (await waitUntil(() => below.every((pid) => !isRunning(pid)), 20_000))
      ? []
      : below.filter(isRunning).map((pid) => `${pid} ${commandLine(pid)}`);

    expect({ npmExited, portClosed, leftRunning }, npm.describe()).toEqual({ npmExited: true, portClosed: true, leftRunning: [] });
    // The server drained and closed on its own, rather than being killed mid-request.
    expect(npm.logLines().some((line) => /shutting down/.test(line.msg ?? '')), npm.describe()).toBe(true);
  });
});

describe('the drain on SIGTERM', () => {
  it('ends at its deadline when a client never finishes its request', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const server = processes.spawn(['serve'], {
      DATABASE_URL: `sqlite:${join(scratch, 'stalled.db')}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    await waitForHealthy(`http://127.0.0.1:${port}`, server, 60_000);
    const { pid } = await server.waitForLog((line) => String(line.msg).startsWith('Server listening'));

    // Headers promise 100 bytes of body; 4 arrive, then the client goes quiet (and stays connected).
    const stalled = connect({ host: '127.0.0.1', port });
    stalled.on('error', () => {});
    // A public route that logs its requests at info (ingestion does not), so the test sees it arrive.
    stalled.write('POST /api/v1/dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a"');
    await server.waitForLog((line) => line.msg === 'incoming request' && line.req?.method === 'POST');

    const signalled = Date.now();
    process.kill(pid, 'SIGTERM');
    const stopped = await waitUntil(() => !isRunning(pid), 30_000);
    const stoppedAfterMs = Date.now() - signalled;
    stalled.destroy();

    expect(stopped, server.describe()).toBe(true);
    // The server stops waiting at 8 s and closes within 1 s more (inside Docker's 10 s before
    // SIGKILL); the rest of the margin is for a loaded machine.
    expect(stoppedAfterMs).toBeGreaterThanOrEqual(8_000);
    expect(stoppedAfterMs).toBeLessThan(12_000);
    expect(server.logLines().some((line) => /drain deadline/.test(line.msg ?? '')), server.describe()).toBe(true);
    expect(await acceptsConnections(port)).toBe(false);
  });
});
