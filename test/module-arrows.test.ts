import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The arrows between the relational analytics core's modules run one way: the events module's
// writers call the derived data's maintainer (src/modules/analytics/maintainer.ts), the website
// API's reads (src/modules/stats) read the derived tables, and the analytics module imports
// neither back (the raw event's types live in src/db/event-records.ts).

const MODULES = join(import.meta.dirname, '../src/modules');

/** Each file of the module with the relative paths it imports. */
function importsOf(module: string): { file: string; imports: string[] }[] {
  return readdirSync(join(MODULES, module), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => {
      const text = readFileSync(join(MODULES, module, file), 'utf8');
      const imports = [...text.matchAll(/^(?:import|export)[^'"]*?from '([^']+)'/gm)].map((match) => match[1]!);
      return { file, imports };
    });
}

describe('the arrows between analytics, events and stats', () => {
  it('never go from analytics to events or stats', () => {
    for (const { file, imports } of importsOf('analytics')) {
      for (const path of imports) expect(path, `analytics/${file}`).not.toMatch(/\/(events|stats)\//);
    }
  });

  it('go from the relational events writers to analytics only through the maintainer', () => {
    for (const { file, imports } of importsOf('events').filter(({ file }) => !file.startsWith('clickhouse-'))) {
      for (const path of imports.filter((p) => p.includes('/analytics/'))) expect(path, `events/${file}`).toBe('../analytics/maintainer.ts');
    }
  });

  it('never go from stats to the derived data\'s writers', () => {
    const writers = ['maintainer', 'derivations', 'derive-rollups', 'derived-build', 'rollup-backlog'];
    for (const { file, imports } of importsOf('stats')) {
      for (const path of imports) expect(writers.some((name) => path.endsWith(`/analytics/${name}.ts`)), `stats/${file} imports ${path}`).toBe(false);
    }
  });
});
