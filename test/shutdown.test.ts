import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.ts';
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

describe('the rollups on SIGTERM', () => {
  const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
  const EVENTS = 300;
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

  // The README promises that a graceful stop derives every accepted event: the last derivation
  // runs while the server closes, and needs the database still open.
  it('derives the events accepted just before the stop, leaving no backlog and no warning', { timeout: 120_000 }, async () => {
    const file = join(scratch, 'rollups.db');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: `sqlite:${file}`, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' };
    const created = await processes.run(['admin', 'create-account', '--email', 'stop@example.com', '--name', 'Stop', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { token } = JSON.parse(created.stdout) as { token: string };

    const server = processes.spawn(['serve'], env);
    await waitForHealthy(base, server, 60_000);
    const { pid } = await server.waitForLog((line) => String(line.msg).startsWith('Server listening'));
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const website = await fetch(`${base}/api/v1/admin/websites`, { method: 'POST', headers: auth, body: JSON.stringify({ domain: 'stop.example.com', timezone: 'UTC', name: 'Stop' }) });
    expect(website.status).toBe(200);
    const { id, trackingId } = ((await website.json()) as { data: Array<{ id: string; trackingId: string }> }).data[0]!;

    // Accepted (answered 200, so durable) in one burst, faster than the deriver's delay.
    const answers = await Promise.all(
      Array.from({ length: EVENTS }, (_, i) =>
        fetch(`${base}/api/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': CHROME },
          body: JSON.stringify({ websiteId: trackingId, href: `https://stop.example.com/page-${i % 7}`, visitorId: `visitor-${i}`, sessionId: `session-${i}`, type: 'pageview' }),
        }).then((response) => response.status),
      ),
    );
    expect(answers.every((status) => status === 200)).toBe(true);
    process.kill(pid, 'SIGTERM');
    expect((await server.exited).code, server.describe()).toBe(0);
    const warnings = server.logLines().filter((line) => line.level >= 40).map((line) => line.msg);
    expect(warnings, server.describe()).toEqual([]);

    // Nothing waits: the stop derived it all (read before a restart, which would derive it too).
    const db = createDatabase(`sqlite:${file}`);
    try {
      expect(await db.kysely.selectFrom('rollup_backlog').select('seq').execute()).toEqual([]);
      expect(await db.kysely.selectFrom('events').select('id').where('website_id', '=', id).execute()).toHaveLength(EVENTS);
    } finally {
      await db.close();
    }

    const again = processes.spawn(['serve'], env);
    await waitForHealthy(base, again, 60_000);
    const overview = await fetch(`${base}/api/v1/analytics/overview?websiteId=${id}&startAt=${day(-1)}&endAt=${day(1)}&timezone=UTC`, { headers: auth });
    expect(overview.status).toBe(200);
    expect(((await overview.json()) as { data: Array<Record<string, number>> }).data[0]).toMatchObject({ visitors: EVENTS, pageviews: EVENTS, sessions: EVENTS });
    const { pid: againPid } = await again.waitForLog((line) => String(line.msg).startsWith('Server listening'));
    process.kill(againPid, 'SIGTERM');
    expect((await again.exited).code, again.describe()).toBe(0);
  });
});
