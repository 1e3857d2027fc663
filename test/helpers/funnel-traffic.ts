import type { NewEvent } from '../../src/modules/events/event.types.ts';
import { newEvent } from './factories.ts';

// Replayable traffic for the stored funnels' tests (test/funnel-crossings.test.ts,
// test/funnel-build.test.ts): visitors over a few days from FUNNEL_START, their events on the
// funnels' steps (/pricing, /a, /b, the signup goal) and off them, with ties at 15-minute
// instants, and some goals sent by the server (a goal delete takes those).

export const FUNNEL_START = Date.parse('2026-04-01T00:00:00.000Z');
export const FUNNEL_DAYS = 6;

export interface TrafficShape {
  /** Visitor ids are `${prefix}-${n}`. */
  prefix: string;
  /** Each visitor has 1 to this many events. */
  maxEvents: number;
  /** Days after FUNNEL_START the traffic starts. */
  shiftDays?: number;
}

export function funnelTraffic(websiteId: string, seed: number, visitors: number, shape: TrafficShape): NewEvent[] {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const events: NewEvent[] = [];
  for (let v = 0; v < visitors; v += 1) {
    const visitor = `${shape.prefix}-${v}`;
    const count = 1 + Math.floor(random() * shape.maxEvents);
    for (let i = 0; i < count; i += 1) {
      const at = new Date(FUNNEL_START + (shape.shiftDays ?? 0) * 86_400_000 + Math.floor(random() * FUNNEL_DAYS * 24 * 4) * 15 * 60_000).toISOString();
      const pick = random();
      const extra: Partial<NewEvent> =
        pick < 0.25
          ? { path: '/pricing' }
          : pick < 0.45
            ? { path: '/a' }
            : pick < 0.65
              ? { path: '/b' }
              : pick < 0.85
                ? { type: 'custom', name: 'signup', path: null, ...(random() < 0.5 ? { source: 'api' as const, sessionId: null } : {}) }
                : { path: '/other' };
      events.push(newEvent(websiteId, visitor, { sessionId: `s-${visitor}-${seed}-${i}`, occurredAt: at, ...extra }));
    }
  }
  return events;
}
