import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { sqliteFileFromUrl } from '../../db/database-url.ts';
import { createPrivateFile } from '../../lib/private-file.ts';
import { fail, messageOf } from '../failure.ts';
import { configOrFail } from '../settings.ts';

// A consistent copy of a SQLite database that may be in use: VACUUM INTO reads one snapshot
// (a read transaction, which under WAL neither blocks the server's writers nor restarts when
// they commit, unlike the page-by-page backup API) and writes a compact copy. The copy is written
// beside the target, checked, then renamed into place, so a failure never leaves half a file.

interface BackupOptions {
  to: string;
  force?: boolean;
}


function megabytes(path: string): string {
  return `${(statSync(path).size / 1_048_576).toFixed(1)} MB`;
}

export function registerBackupCommand(admin: Command): void {
  admin
    .command('backup')
    .description('copy the SQLite database, consistently, while the server runs (PostgreSQL: use pg_dump)')
    .requiredOption('--to <file>', 'where to write the copy (readable by you only)')
    .option('--force', 'replace the file if it exists')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline admin backup --to /backups/sightline-$(date +%F).db
  $ sightline admin backup --to /backups/latest.db --force

Restore: stop the server, put the copy in place of the database file (remove the old -wal and
-shm files beside it), start the server. Keep secret.key (or SIGHTLINE_SECRET_KEY) too: the
integrations' credentials cannot be read without it.`,
    )
    .action(async (options: BackupOptions) => {
      const config = configOrFail();
      if (!config.databaseUrl.startsWith('sqlite:')) {
        fail('backup copies SQLite databases only; on PostgreSQL use pg_dump (see the README)', 2);
      }
      const source = sqliteFileFromUrl(config.databaseUrl);
      if (source === null) fail('DATABASE_URL is an in-memory database: there is nothing to back up', 2);
      if (!existsSync(source)) fail(`no database at ${source} (check DATABASE_URL)`, 1);
      const target = resolve(options.to);
      if (target === source) fail('--to names the database itself', 2);
      if (existsSync(target) && !options.force) fail(`${target} exists: add --force to replace it`, 1);

      const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.partial`);
      const { default: SQLite } = await import('better-sqlite3');
      try {
        createPrivateFile(temporary);
        const database = new SQLite(source, { fileMustExist: true });
        try {
          database.pragma('busy_timeout = 10000');
          database.prepare('VACUUM INTO ?').run(temporary);
        } finally {
          database.close();
        }
        const copy = new SQLite(temporary, { fileMustExist: true });
        let check: string;
        try {
          // The copy is a plain file, not a WAL database: nothing else will ever open it in place.
          copy.pragma('journal_mode = DELETE');
          check = String(copy.pragma('integrity_check', { simple: true }));
        } finally {
          copy.close();
        }
        if (check !== 'ok') throw new Error(`the copy failed its integrity check: ${check}`);
        if (existsSync(target) && !options.force) throw new Error(`${target} appeared meanwhile; add --force to replace it`);
        renameSync(temporary, target);
      } catch (error) {
        try {
          unlinkSync(temporary);
        } catch {
          // It was never created, or already renamed.
        }
        fail(`backup failed: ${messageOf(error)}`, 1);
      }
      process.stdout.write(`Backed up ${source} to ${target} (${megabytes(target)}, integrity check ok).\n`);
      // The copy holds the integrations' credentials encrypted: it is only whole with its key.
      const keyFile = join(dirname(source), 'secret.key');
      const key = config.secretKey ? 'SIGHTLINE_SECRET_KEY' : existsSync(keyFile) ? keyFile : null;
      if (key) process.stderr.write(`Keep ${key} safe as well, apart from the backup: the integrations' credentials in the copy cannot be read without it.\n`);
    });
}
