import Bowser from 'bowser';
import { memoByString } from '../../lib/memo.ts';
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

export interface Versions {
  browserVersion: string | null;
  osVersion: string | null;
}

const NO_DEVICE: DeviceInfo = Object.freeze({ browser: null, os: null, device: null });
const NO_VERSIONS: Versions = Object.freeze({ browserVersion: null, osVersion: null });

/** A version as the parser gives it, cut to its first two parts (Chrome 124.0.6367.91 -> 124.0). */
const shortVersion = (version: string | undefined): string | null => (version ? version.split('.').slice(0, 2).join('.').slice(0, 32) : null);

export function parseDevice(userAgent: string): { device: DeviceInfo; versions: Versions } {
  if (userAgent.trim() === '') return { device: NO_DEVICE, versions: NO_VERSIONS };
  const parsed = Bowser.parse(userAgent);
  const type = parsed.platform.type ?? '';
  return {
    device: {
      browser: parsed.browser.name || null,
      os: parsed.os.name || null,
      device: DEVICE_TYPES.has(type) ? type : null,
    },
    versions: { browserVersion: shortVersion(parsed.browser.version), osVersion: shortVersion(parsed.os.version) },
  };
}

/** What the user agent says: a bot or not, the device and versions (pure functions of the string). */
export interface UserAgentFacts {
  bot: boolean;
  device: DeviceInfo;
  versions: Versions;
}

// Parsing a user agent costs more than the rest of an event's checks, and a site's traffic comes
// from few distinct user agents: the facts are kept for the most recently seen ones.
export const userAgentFacts = memoByString(
  (userAgent): UserAgentFacts => {
    const bot = isBot(userAgent);
    const parsed = bot ? { device: NO_DEVICE, versions: NO_VERSIONS } : parseDevice(userAgent);
    return Object.freeze({ bot, device: Object.freeze(parsed.device), versions: Object.freeze(parsed.versions) });
  },
  { max: 2000, maxInputLength: 512 },
);
