import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.ts';

// A PostgreSQL server of the test's own (initdb into a temporary folder, on a free port), so a
// test can restart or crash it without disturbing the shared server every other suite uses.
// It runs with the installation's defaults (fsync on), so a crash loses only what PostgreSQL
// itself would lose. As root, the server runs as the `postgres` user, which PostgreSQL requires.

function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return null;
}

const BIN = postgresBinaries();
const AS_ROOT = process.getuid?.() === 0;

/** Why a private PostgreSQL cannot be started here, or null when it can. */
export const privatePostgresProblem: string | null = BIN ? null : 'no PostgreSQL server binaries under /usr/lib/postgresql';

export class PrivatePostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'sightline-pg-'));
  readonly dataDir = join(this.dir, 'data');
  port = 0;

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private run(tool: string, args: string[]): void {
    const command = join(BIN!, tool);
    if (AS_ROOT) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe', cwd: this.dir });
    else execFileSync(command, args, { stdio: 'pipe', cwd: this.dir });
  }

  async start(): Promise<this> {
    if (AS_ROOT) chownSync(this.dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
    this.port = await freePort();
    this.run('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    this.pgCtl('start');
    return this;
  }

  private pgCtl(action: 'start' | 'stop' | 'restart', mode?: 'fast' | 'immediate'): void {
    const options = `-c listen_addresses=127.0.0.1 -c port=${this.port} -c unix_socket_directories='${this.dir}'`;
    const args = ['-D', this.dataDir, '-w', '-t', '60', '-l', join(this.dir, 'server.log')];
    if (action !== 'stop') args.push('-o', options);
    if (mode) args.push('-m', mode);
    this.run('pg_ctl', [action, ...args]);
  }

  /** `immediate` is a crash: no checkpoint, the server recovers from its WAL at start. */
  stop(mode: 'fast' | 'immediate'): void {
    this.pgCtl('stop', mode);
  }

  startAgain(): void {
    this.pgCtl('start');
  }

  destroy(): void {
    try {
      this.stop('immediate');
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
