import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopAllChildren } from './children.ts';

// What a bench run leaves behind and takes away at its end or at a signal: the servers it started,
// the databases it prepared (each with its drop) and a temporary folder.

export interface Scratch {
  /** The run's temporary folder. */
  dir: string;
  /** Registers the drop of a database the run prepared. */
  onCleanup: (drop: () => Promise<void>) => void;
  /** Stops every server, drops every database, removes the folder; once, however often called. */
  cleanup: () => Promise<void>;
}

export function benchScratch(prefix: string): Scratch {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const drops: (() => Promise<void>)[] = [];
  let cleaned: Promise<void> | undefined;
  return {
    dir,
    onCleanup: (drop) => drops.push(drop),
    cleanup: () =>
      (cleaned ??= (async () => {
        await stopAllChildren();
        for (const drop of drops) await drop().catch((error: Error) => console.error(`cleanup: ${error.message}`));
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
}
