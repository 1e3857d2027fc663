import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { type TestApp, useTestApp } from './app.ts';
import type { Config } from '../../src/config.ts';
import { REPO_ROOT } from './processes.ts';

// The sightline client commands as real processes (`node bin/sightline.js ...`) against a real
// listening server: the test app of useTestApp, listening on a free port. Each run gets its own
// empty HOME unless the test passes one, so the real ~/.config is never read or written.

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The credential in SIGHTLINE_TOKEN; leave it out to use what `login` saved in `home`. */
  token?: string;
  /** Written to stdin, which is then closed (stdin is never a terminal here). */
  input?: string;
  /** HOME for the process; a fresh empty directory when left out. */
  home?: string;
  /** Extra environment; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
}

export interface TerminalStep {
  /** Wait until the terminal shows this... */
  waitFor: RegExp;
  /** ...then type this and Enter. */
  type: string;
}

const BIN = join(REPO_ROOT, 'bin', 'sightline.js');
const RUN_TIMEOUT_MS = 45_000;

/** `script` gives the process a pseudo-terminal (util-linux); tests of prompts need it. */
export const HAS_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

export function expectExit(result: CliResult, code: number): void {
  expect(result.code, `exit code\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`).toBe(code);
}

/** Parses stdout as one JSON document (the --json contract). */
export function parseJson(result: CliResult): any {
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`stdout is not one JSON document\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  }
}

export interface CliHarness {
  t: TestApp;
  baseUrl(): string;
  /** A fresh, empty HOME directory (removed after the suite). */
  newHome(): string;
  run(args: string[], options?: RunOptions): Promise<CliResult>;
  /** Runs the command on a pseudo-terminal, answering prompts as they appear. */
  runInTerminal(args: string[], steps: TerminalStep[], options?: RunOptions): Promise<CliResult>;
}

export function useCliHarness(overrides: Partial<Config> = {}): CliHarness {
  const t = useTestApp('sqlite', overrides);
  const children = new Set<ChildProcess>();
  const scratch = mkdtempSync(join(tmpdir(), 'sightline-cli-client-'));
  let homes = 0;
  let baseUrl = '';

  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  const newHome = () => mkdtempSync(join(scratch, `home${++homes}-`));

  function environment(options: RunOptions): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      // SIGHTLINE_FORCE_TTY passes: a suite that reads tables as people see them sets it.
      const own = name.startsWith('SIGHTLINE_') && name !== 'SIGHTLINE_FORCE_TTY';
      if (own || name.startsWith('PROVIDER_') || name === 'XDG_CONFIG_HOME') continue;
      env[name] = value;
    }
    Object.assign(env, { HOME: options.home ?? newHome(), SIGHTLINE_API_BASE: baseUrl, SHELL: '/bin/sh' });
    if (options.token !== undefined) env.SIGHTLINE_TOKEN = options.token;
    for (const [name, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    return env;
  }

  function finish(child: ChildProcess, onStdout?: (all: string) => void): Promise<CliResult> {
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      onStdout?.(stdout);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${child.spawnargs.join(' ')} did not finish within ${RUN_TIMEOUT_MS} ms\n${stdout}\n${stderr}`));
      }, RUN_TIMEOUT_MS);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        children.delete(child);
        resolve({ code, stdout, stderr });
      });
    });
  }

  return {
    t,
    baseUrl: () => baseUrl,
    newHome,
    run(args, options = {}) {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: environment(options), stdio: 'pipe' });
      child.stdin!.on('error', () => {});
      child.stdin!.end(options.input ?? '');
      return finish(child);
    },
    runInTerminal(args, steps, options = {}) {
      const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
      const command = [process.execPath, BIN, ...args].map(quote).join(' ');
      const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: REPO_ROOT, env: environment(options), stdio: 'pipe' });
      child.stdin!.on('error', () => {});
      let next = 0;
      let seenUpTo = 0;
      return finish(child, (all) => {
        const step = steps[next];
        if (!step) return;
        const match = step.waitFor.exec(all.slice(seenUpTo));
        if (!match) return;
        seenUpTo += match.index + match[0].length;
        next++;
        child.stdin!.write(`${step.type}\r`);
      });
    },
  };
}
