import { type BrowserVisit, CHROME, browserEvent } from './browser-event.ts';
import { generator } from './synthetic-events.ts';

// Traffic shaped like users (issue 39): visitors who come back, sessions of several pages, a long
// tail of paths, and sources, campaigns, browsers and devices in skewed proportions. Each call of
// the returned function is the next request's body and headers; the four pageviews of a session
// follow each other, and a visitor's later sessions carry its growing session number.

/** The shape, printed with the figures. */
export const RETURNING_SHAPE = {
  visitors: 20_000,
  pagesPerSession: 4,
  paths: 3_000,
  goalShare: 0.05,
  campaignShare: 0.2,
} as const;

const REFERRERS = [
  [0.35, null],
  [0.3, 'https://www.google.com/'],
  [0.1, 'https://news.ycombinator.com/item?id=1'],
  [0.08, 'https://twitter.com/someone/status/1'],
  [0.07, 'https://www.reddit.com/r/webdev/'],
  [0.05, 'https://duckduckgo.com/'],
  [0.05, 'https://blog.example.org/post'],
] as const;
const AGENTS = [
  [0.45, CHROME],
  [0.25, 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'],
  [0.15, 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'],
  [0.1, 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'],
  [0.05, 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36'],
] as const;
const CAMPAIGNS = ['spring_sale', 'newsletter', 'launch', 'retargeting'];

function pick<T>(random: () => number, weighted: readonly (readonly [number, T])[]): T {
  let r = random();
  for (const [weight, value] of weighted) {
    if ((r -= weight) < 0) return value;
  }
  return weighted.at(-1)![1];
}

export interface ShapedRequest {
  body: string;
  headers: Record<string, string>;
}

export function returningVisitorTraffic(website: { trackingId: string; domain: string }, seed = process.pid): () => ShapedRequest {
  const random = generator(seed);
  const sessions = new Map<number, number>();
  let current: { visit: BrowserVisit; left: number; campaign: string | null; agent: string } | null = null;
  return () => {
    if (current === null || current.left === 0) {
      // A skewed draw: a few visitors come back often, most rarely.
      const visitor = Math.floor(RETURNING_SHAPE.visitors * random() ** 2);
      const number = (sessions.get(visitor) ?? 0) + 1;
      sessions.set(visitor, number);
      current = {
        visit: {
          visitorId: `shaped-visitor-${seed}-${visitor}`,
          sessionId: `shaped-session-${seed}-${visitor}-${number}`,
          visitorFirstSeenAt: '2026-01-01T00:00:00.000Z',
          visitorSessionNumber: number,
          href: '',
          referrer: pick(random, REFERRERS),
          userAgent: pick(random, AGENTS),
        },
        left: RETURNING_SHAPE.pagesPerSession,
        campaign: random() < RETURNING_SHAPE.campaignShare ? CAMPAIGNS[Math.floor(random() * CAMPAIGNS.length)]! : null,
        agent: '',
      };
      current.agent = current.visit.userAgent;
    }
    const first = current.left === RETURNING_SHAPE.pagesPerSession;
    current.left -= 1;
    // Later pages of a session come from the site itself.
    if (!first) current.visit.referrer = `https://${website.domain}/`;
    // A long tail of paths: page n is drawn with a weight falling as 1/n.
    const path = Math.floor(Math.exp(random() * Math.log(RETURNING_SHAPE.paths)));
    const query = current.campaign ? `?utm_source=mail&utm_medium=email&utm_campaign=${current.campaign}` : '';
    const visit = { ...current.visit, href: `https://${website.domain}/docs/page-${path}${query}` };
    const goal = random() < RETURNING_SHAPE.goalShare ? { eventName: 'signup', plan: 'pro' } : undefined;
    return { body: browserEvent(website, visit, goal), headers: { 'user-agent': current.agent } };
  };
}
