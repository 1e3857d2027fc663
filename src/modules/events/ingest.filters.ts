import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';
import { matchesGlob } from '../../lib/glob.ts';

// The website settings that decide whether a browser event is kept. Each rule is a small pure
// function so the order of the checks reads in one place (dropReason). The address ranges are
// parsed once per settings value (see compileFilters), not on every event; path patterns are
// matched by a linear-time glob, never a regular expression a settings writer could make hang.

export type DropReason =
  | 'bot'
  | 'excluded-ip'
  | 'excluded-country'
  | 'excluded-hostname'
  | 'hostname-not-allowed'
  | 'excluded-path';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The settings as the website row stores them (lists already parsed). */
export interface WebsiteSettings {
  domain: string;
  allowedHostnames: string[];
  excludedHostnames: string[];
  excludedPaths: string[];
  excludedIps: string[];
  excludedCountries: string[];
}

/** An address range of excludedIps, parsed: the range and how many leading bits must match. */
export interface AddressRange {
  range: Address;
  bits: number;
}

/** The settings ready to test events against. */
export interface WebsiteFilters {
  /** The website's domain without `www.`. */
  bareDomain: string;
  allowedHostnames: string[];
  excludedHostnames: string[];
  /** Whole-path patterns where `*` stands for any run of characters, slashes included. */
  excludedPaths: string[];
  /** Unparseable entries are left out: they match nothing. */
  excludedIps: AddressRange[];
  excludedCountries: string[];
}

export interface EventOrigin {
  /** isBot(user agent), computed by the caller (who may have it cached). */
  bot: boolean;
  /** The client address, already unwrapped from an IPv4-mapped IPv6 form; null when unparseable. */
  address: Address | null;
  country: string | null;
  hostname: string;
  path: string;
}

/** A missing user agent counts as a bot: every browser sends one. */
export function isBot(userAgent: string): boolean {
  return userAgent.trim() === '' || isbot(userAgent);
}

/** Parses a client address; `::ffff:1.2.3.4` becomes the IPv4 address it carries. */
export function parseAddress(value: string | undefined): Address | null {
  if (!value) return null;
  try {
    return ipaddr.process(value.replace(/^\[|\]$/g, ''));
  } catch {
    return null;
  }
}

const unwrap = (address: Address): Address =>
  address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;

/** An excludedIps entry (a single address or a CIDR range, IPv4 or IPv6), or null when unparseable. */
export function parseAddressRange(entry: string): AddressRange | null {
  try {
    const [parsed, prefix] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), null];
    const range = unwrap(parsed);
    const full = range.kind() === 'ipv4' ? 32 : 128;
    // A range written as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) covers the IPv4 range /8.
    const bits = prefix === null ? full : range === parsed ? prefix : Math.max(prefix - 96, 0);
    return { range, bits };
  } catch {
    return null;
  }
}

/** Whether the address is in one of the ranges. */
export function addressExcluded(address: Address | null, ranges: AddressRange[]): boolean {
  if (!address) return false;
  return ranges.some(({ range, bits }) => {
    if (range.kind() !== address.kind()) return false;
    try {
      return (address as ipaddr.IPv4).match(range as ipaddr.IPv4, bits);
    } catch {
      return false;
    }
  });
}

/** `*.example.com` matches every sub-domain of example.com (not example.com itself). */
export function hostMatches(hostname: string, pattern: string): boolean {
  if (pattern.startsWith('*.')) return hostname.endsWith(pattern.slice(1));
  return hostname === pattern;
}

/** The website's domain, its www. form, and its allowed host names. */
export function hostAccepted(hostname: string, filters: WebsiteFilters): boolean {
  const bare = filters.bareDomain;
  if (hostname === bare || hostname === `www.${bare}`) return true;
  return filters.allowedHostnames.some((pattern) => hostMatches(hostname, pattern));
}

/** Parses and compiles the settings once, for every event they will filter. */
export function compileFilters(settings: WebsiteSettings): WebsiteFilters {
  return {
    bareDomain: settings.domain.replace(/^www\./, ''),
    allowedHostnames: settings.allowedHostnames,
    excludedHostnames: settings.excludedHostnames,
    excludedPaths: settings.excludedPaths,
    excludedIps: settings.excludedIps.map(parseAddressRange).filter((range) => range !== null),
    excludedCountries: settings.excludedCountries,
  };
}

/** Why the event must be dropped, or null to keep it. */
export function dropReason(origin: EventOrigin, filters: WebsiteFilters): DropReason | null {
  if (origin.bot) return 'bot';
  if (addressExcluded(origin.address, filters.excludedIps)) return 'excluded-ip';
  if (origin.country && filters.excludedCountries.includes(origin.country)) return 'excluded-country';
  if (filters.excludedHostnames.some((pattern) => hostMatches(origin.hostname, pattern))) return 'excluded-hostname';
  if (!hostAccepted(origin.hostname, filters)) return 'hostname-not-allowed';
  if (filters.excludedPaths.some((pattern) => matchesGlob(pattern, origin.path))) return 'excluded-path';
  return null;
}
