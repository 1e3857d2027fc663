import Bowser from 'bowser';
import { isBot } from './ingest.filters.ts';

// Browser, operating system and device class, read from the request's User-Agent header (the
// browser sets it; the payload's copy could say anything).

export interface DeviceInfo {
  browser: string | null;
  os: string | null;
  /** desktop, mobile, tablet or tv. */
  device: string | null;
}

const DEVICE_TYPES = new Set(['desktop', 'mobile', 'tablet', 'tv']);

export function parseDevice(userAgent: string): DeviceInfo {
  if (userAgent.trim() === '') return { browser: null, os: null, device: null };
  const parsed = Bowser.parse(userAgent);
  const type = parsed.platform.type ?? '';
  return {
    browser: parsed.browser.name || null,
    os: parsed.os.name || null,
    device: DEVICE_TYPES.has(type) ? type : null,
  };
}

/** What the user agent says: a bot or not, and the device (both pure functions of the string). */
export interface UserAgentFacts {
  bot: boolean;
  device: DeviceInfo;
}

// Parsing a user agent costs more than the rest of an event's checks, and a site's traffic comes
// from few distinct user agents: the facts are kept for the most recently seen ones. Long strings
// are parsed every time, so the cache stays small.
const AGENTS_KEPT = 2000;
const MAX_KEPT_LENGTH = 512;
const known = new Map<string, UserAgentFacts>();

export function userAgentFacts(userAgent: string): UserAgentFacts {
  const cached = known.get(userAgent);
  if (cached) {
    // Most recently used last, so the oldest is the first to go.
    known.delete(userAgent);
    known.set(userAgent, cached);
    return cached;
  }
  const bot = isBot(userAgent);
  const facts: UserAgentFacts = { bot, device: bot ? { browser: null, os: null, device: null } : Object.freeze(parseDevice(userAgent)) };
  if (userAgent.length <= MAX_KEPT_LENGTH) {
    if (known.size >= AGENTS_KEPT) known.delete(known.keys().next().value!);
    known.set(userAgent, Object.freeze(facts));
  }
  return facts;
}
