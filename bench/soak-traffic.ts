import ipaddr from 'ipaddr.js';
import { CHROME } from './browser-event.ts';
import { generator } from './synthetic-events.ts';

// The soak's simulated audience: a pool of visitors who come back (a skewed draw, so some return
// often), each with one public address (about a third IPv6) and one browser, browsing in
// sessions of one to six pages. Deterministic: every run sends the same traffic.

export interface Visitor {
  id: string;
  firstSeenAt: string;
  sessions: number;
  address: string;
  userAgent: string;
  /** Whether a page view of theirs was stored (server-side goals need one). */
  stored: boolean;
}

export interface Session {
  visitor: Visitor;
  id: string;
  number: number;
  pagesLeft: number;
  /** The page last viewed (the next page's referrer), null before the first. */
  lastHref: string | null;
  /** Where the session came from: its first page's referrer. */
  source: string | null;
  campaign: string | null;
}

const POOL = 20_000;
const CONCURRENT_SESSIONS = 64;
const IPV6_SHARE = 0.35;

const USER_AGENTS = [
  CHROME,
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
];

// Blocks that regional registries allocated to access networks (none of the documentation, private
// or reserved ranges), so the GeoIP database knows most addresses drawn inside them.
const IPV4_BLOCKS = ['24', '73', '98', '2', '5', '31', '46', '81', '86', '90', '109', '1', '49', '110', '118', '177', '187', '191', '41', '105'];
const IPV6_BLOCKS = ['2600:1700', '2601:0', '2603:8000', '2a01:cb00', '2a02:8100', '2a00:23c0', '2a02:a400', '2001:ee0', '2400:4050', '2405:201', '2804:14c', '2c0f:f7a8'];

const SOURCES = [null, null, 'https://www.google.com/', 'https://www.google.com/', 'https://news.ycombinator.com/', 'https://t.co/', 'https://github.com/', 'https://www.reddit.com/', 'https://duckduckgo.com/'];
const CAMPAIGNS = ['spring_sale', 'launch', 'newsletter'];
const PAGES = ['/', '/pricing', '/docs', '/docs/install', '/docs/api', '/signup', '/about', '/changelog'];
const BLOG_POSTS = 200;

export const GOAL_NAMES = ['signup', 'add_to_cart', 'newsletter', 'download'];

export class Audience {
  private readonly random = generator(38);
  private readonly visitors = new Map<number, Visitor>();
  private readonly sessions: Session[] = [];
  private turn = 0;
  private sessionSequence = 0;

  constructor(private readonly domain: string) {
    for (let i = 0; i < CONCURRENT_SESSIONS; i++) this.sessions.push(this.newSession());
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private address(): string {
    for (;;) {
      const text =
        this.random() < IPV6_SHARE
          ? `${this.pick(IPV6_BLOCKS)}:${Array.from({ length: 6 }, () => Math.floor(this.random() * 0x10000).toString(16)).join(':')}`
          : `${this.pick(IPV4_BLOCKS)}.${[0, 0, 0].map(() => 1 + Math.floor(this.random() * 254)).join('.')}`;
      const parsed = ipaddr.parse(text);
      if (parsed.range() === 'unicast') return parsed.toString();
    }
  }

  private visitor(): Visitor {
    const number = Math.floor(POOL * this.random() ** 2);
    let visitor = this.visitors.get(number);
    if (!visitor) {
      visitor = {
        id: `soak-${number.toString(36)}-${Math.floor(this.random() * 2 ** 32).toString(36)}`,
        firstSeenAt: new Date().toISOString(),
        sessions: 0,
        address: this.address(),
        userAgent: this.pick(USER_AGENTS),
        stored: false,
      };
      this.visitors.set(number, visitor);
    }
    return visitor;
  }

  private newSession(): Session {
    const visitor = this.visitor();
    visitor.sessions += 1;
    return {
      visitor,
      id: `s-${(this.sessionSequence++).toString(36)}-${visitor.id}`,
      number: visitor.sessions,
      pagesLeft: 1 + Math.floor(this.random() * 6),
      lastHref: null,
      source: this.pick(SOURCES),
      campaign: this.random() < 0.15 ? this.pick(CAMPAIGNS) : null,
    };
  }

  private path(): string {
    return this.random() < 0.3 ? `/blog/post-${Math.floor(this.random() * BLOG_POSTS)}` : this.pick(PAGES);
  }

  /** The next page view: the next open session's next page (a finished session makes way for another visit). */
  nextPageview(): { session: Session; href: string; referrer: string | null } {
    const slot = this.turn++ % this.sessions.length;
    let session = this.sessions[slot]!;
    if (session.pagesLeft === 0) session = this.sessions[slot] = this.newSession();
    const first = session.lastHref === null;
    const query = first && session.campaign ? `?utm_source=newsletter&utm_medium=email&utm_campaign=${session.campaign}` : '';
    const href = `https://${this.domain}${this.path()}${query}`;
    const referrer = first ? session.source : session.lastHref;
    session.lastHref = href;
    session.pagesLeft -= 1;
    return { session, href, referrer };
  }

  /** An open session whose visitor has a stored page view (server-side goals need one; the set-up stores the first). */
  activeSession(): Session {
    const stored = this.sessions.filter((session) => session.visitor.stored);
    return this.pick(stored.length > 0 ? stored : this.sessions);
  }

  goalName(): string {
    return this.pick(GOAL_NAMES);
  }

  amount(): number {
    return this.pick([9, 19, 29, 49, 99]) + 0.99;
  }
}
