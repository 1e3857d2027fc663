import type { Engine } from '../database.ts';

// The two column types whose spelling differs between engines; everything else is shared.
export function columnTypes(engine: Engine) {
  return {
    timestamp: engine === 'postgres' ? ('timestamptz' as const) : ('text' as const),
    boolean: engine === 'postgres' ? ('boolean' as const) : ('integer' as const),
  };
}
