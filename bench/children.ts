import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

// Server children: each is `node bin/run-ts.js bench/<script>.ts`, prints "LISTENING <port>"
// on stdout once it accepts connections, and exits cleanly on SIGTERM.

const RUN_TS = resolve('bin/run-ts.js');
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

export interface ServerChild {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Starts a server script and waits for the port it reports. */
export function startChild(script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerChild> {
  const child = spawn(process.execPath, [...nodeArgs, RUN_TS, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));

  return new Promise((resolvePort, reject) => {
    let buffered = '';
    const timer = setTimeout(() => fail(new Error(`${script} did not report a port within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      void stopChild(child);
      reject(error);
    };
    child.once('exit', (code, signal) => fail(new Error(`${script} exited before listening (code ${code}, signal ${signal})`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /LISTENING (\d+)/.exec(buffered);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => running.delete(child));
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      resolvePort({ child, port: Number(match[1]), stop: () => stopChild(child) });
    });
  });
}

/** SIGTERM, then SIGKILL if the child has not exited in time. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** Every child still running (used by the Ctrl-C handler). */
export function stopAllChildren(): Promise<void> {
  return Promise.all([...running].map(stopChild)).then(() => undefined);
}

/** CPU time (user + system, ms) a process has used so far, from /proc; null where unavailable. */
export function cpuTimeMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}
