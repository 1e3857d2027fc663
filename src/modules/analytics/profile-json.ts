import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { jsonArray } from './breakdown-keys.ts';
import { VISITOR_ATTRIBUTES } from './visitor-attributes.ts';

/**
 * A profile: the six visitor attributes of a row (`alias`: visitor_totals, or the events
 * themselves) as one JSON array, spelled by the engine as every writer spells it.
 */
export const profileJson = (engine: Engine, alias: string): RawBuilder<string> =>
  jsonArray(engine, VISITOR_ATTRIBUTES.map((a) => sql.ref(`${alias}.${a}`)));
