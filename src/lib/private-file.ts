import { chmodSync, closeSync, openSync } from 'node:fs';

/**
 * Creates an empty file only its owner can read and write; fails with EEXIST when it exists, so
 * an existing file is never widened or truncated. The umask can only remove bits from 0600, but
 * the mode is said exactly anyway.
 */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'wx', 0o600));
  chmodSync(path, 0o600);
}
