import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { connect, createServer } from 'node:net';
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
  'DATABASE_QUERY_TIMEOUT_SECONDS',
  'SIGHTLINE_PREVIOUS_SECRET_KEYS',
  'COUNTRY_HEADER',
  'GEOIP_DATABASE',
  'ANALYTICS_READ_CONCURRENCY',
  'SIGNUP',
  'CLICKHOUSE_URL',
  'PROVIDER_ONE_API_URL',
  'PROVIDER_TWO_API_URL',
  'PROVIDER_THREE_API_URL',
  'PROVIDER_FOUR_API_URL',
];
const CONFIG_PREFIXES = ['ANALYTICS_', 'LIMIT_', 'RATE_LIMIT_', 'REDIS_', 'SIGN_IN_LIMIT_', 'INTEGRATION_JOB'];

/** Extra environment for a process; a value of undefined removes the variable. */
export type EnvValues = Record<string, string | undefined>;

export function cliEnv(values: EnvValues): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (CONFIG_NAMES.includes(name) || CONFIG_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    env[name] = value;
  }
  // A server started here reads every event accepted before each read, as the in-process apps of
  // the suites do (test/helpers/app.ts): the suites read what they just wrote. A suite may override.
  const strictReads = { ANALYTICS_READ_LAG_MS: '0', ANALYTICS_SETTLE_WAIT_MS: 'unbounded' };
  const merged: NodeJS.ProcessEnv = { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...strictReads, ...values };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  return merged;
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

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT) {
    this.child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
  spawn(args: string[], env: EnvValues): CliProcess {
    return this.start('npx', ['sightline', ...args], env);
  }

  /** Runs `npx sightline <args>` to its end (at most timeoutMs) and returns its exit and output. */
  run(args: string[], env: EnvValues, timeoutMs = 45_000): Promise<CliResult> {
    return this.finish(this.spawn(args, env), timeoutMs);
  }

  /** Starts any command (`npm start`, an installed `sightline`) in `cwd` and leaves it running. */
  spawnCommand(command: string, args: string[], env: EnvValues, cwd = REPO_ROOT): CliProcess {
    return this.start(command, args, env, cwd);
  }

  /** Runs any command in `cwd` to its end (at most timeoutMs). */
  runCommand(command: string, args: string[], env: EnvValues, cwd = REPO_ROOT, timeoutMs = 45_000): Promise<CliResult> {
    return this.finish(this.start(command, args, env, cwd), timeoutMs);
  }

  /** Runs a command line through `sh -c`, as a user pastes it into a terminal. */
  runShell(commandLine: string, env: EnvValues, timeoutMs = 45_000): Promise<CliResult> {
    return this.finish(this.start('sh', ['-c', commandLine], env), timeoutMs);
  }

  killAll(): void {
    for (const cli of this.started) cli.killGroup();
  }

  private start(command: string, args: string[], env: EnvValues, cwd = REPO_ROOT): CliProcess {
    const started = new CliProcess(command, args, cliEnv(env), cwd);
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

/** The pid of every process below `pid` (children, grandchildren...), read from /proc. */
export function descendantPids(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const parent = parentPid(Number(name));
    if (parent === undefined) continue;
    parents.set(parent, [...(parents.get(parent) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** /proc/<pid>/stat: "pid (command) state ppid ..."; the command may hold spaces and parentheses. */
function readStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return undefined; // Gone.
  }
}

function parentPid(pid: number): number | undefined {
  return readStat(pid)?.ppid;
}

/** The command line of a process, as `ps` shows it; '' once it is gone. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** True while the process exists and is not a zombie (exited, waiting for its parent to reap it). */
export function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
