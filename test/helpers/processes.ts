import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

// Runs the `sightline` command the way a new user does (`npx sightline ...` in a checkout) and
// keeps every process it starts, so a suite can end them all in afterAll. Each child leads its
// own process group: npx starts `sh -c sightline`, which starts node, and only a group signal
// reaches all three.

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

// The configuration the CLI reads (src/config.ts): a test states every value it relies on and
// inherits none from the shell that runs the suite.
const CONFIG_NAMES = [
  'DATABASE_URL',
  'HOST',
  'PORT',
  'PUBLIC_URL',
  'LOG_LEVEL',
  'TRUST_PROXY',
  'SIGHTLINE_SECRET_KEY',
  'SMTP_URL',
  'MAIL_FROM',
  'ALERT_COOLDOWN_SECONDS',
  'METRICS_TOKEN',
];
const CONFIG_PREFIXES = ['LIMIT_', 'RATE_LIMIT_'];

export function cliEnv(values: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (CONFIG_NAMES.includes(name) || CONFIG_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    env[name] = value;
  }
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...values };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliResult extends Exit {
  stdout: string;
  stderr: string;
}

/** One running process (`npx sightline ...` or a shell) and what it has written so far. */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  exit: Exit | null = null;
  readonly exited: Promise<Exit>;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(command, args, { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      // 'close' rather than 'exit': both output streams are complete by then.
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    // A failed spawn is reported to whoever awaits `exited`, never as an unhandled rejection.
    this.exited.catch(() => {});
  }

  /** The JSON log lines (pino) written to stdout so far. */
  logLines(): Array<Record<string, any>> {
    return this.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, any>];
        } catch {
          return [];
        }
      });
  }

  /** Waits for a log line that matches; fails early, with the output, when the process exits. */
  async waitForLog(matches: (line: Record<string, any>) => boolean, timeoutMs = 30_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logLines().find(matches);
      if (found) return found;
      if (this.exit) throw new Error(`process exited (${JSON.stringify(this.exit)}) before the log line appeared\n${this.describe()}`);
      if (Date.now() > deadline) throw new Error(`log line not seen within ${timeoutMs} ms\n${this.describe()}`);
      await sleep(25);
    }
  }

  /** SIGKILL to the whole process group (npx, its shell and the node process). */
  killGroup(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  }

  describe(): string {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`;
  }
}

/** Every process a suite started; `killAll()` belongs in its afterAll. */
export class Processes {
  private readonly started: CliProcess[] = [];

  /** Starts `npx sightline <args>` and leaves it running. */
  spawn(args: string[], env: Record<string, string>): CliProcess {
    return this.start('npx', ['sightline', ...args], env);
  }

  /** Runs `npx sightline <args>` to its end (at most timeoutMs) and returns its exit and output. */
  run(args: string[], env: Record<string, string>, timeoutMs = 45_000): Promise<CliResult> {
    return this.finish(this.spawn(args, env), timeoutMs);
  }

  /** Runs a command line through `sh -c`, as a user pastes it into a terminal. */
  runShell(commandLine: string, env: Record<string, string>, timeoutMs = 45_000): Promise<CliResult> {
    return this.finish(this.start('sh', ['-c', commandLine], env), timeoutMs);
  }

  killAll(): void {
    for (const cli of this.started) cli.killGroup();
  }

  private start(command: string, args: string[], env: Record<string, string>): CliProcess {
    const started = new CliProcess(command, args, cliEnv(env));
    this.started.push(started);
    return started;
  }

  private async finish(cli: CliProcess, timeoutMs: number): Promise<CliResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        cli.killGroup();
        reject(new Error(`${cli.child.spawnargs.join(' ')} did not finish within ${timeoutMs} ms\n${cli.describe()}`));
      }, timeoutMs);
    });
    try {
      const exit = await Promise.race([cli.exited, timeout]);
      return { ...exit, stdout: cli.stdout, stderr: cli.stderr };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A port that was free a moment ago (the server cannot report one it picked itself on PORT=0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Polls GET /healthz until it answers 200; fails early, with the output, when the server exits. */
export async function waitForHealthy(baseUrl: string, server: CliProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exit) throw new Error(`server exited (${JSON.stringify(server.exit)}) before it was healthy\n${server.describe()}`);
    try {
      const response = await fetch(`${baseUrl}/healthz`);
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${baseUrl}/healthz not healthy within ${timeoutMs} ms\n${server.describe()}`);
    await sleep(100);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
