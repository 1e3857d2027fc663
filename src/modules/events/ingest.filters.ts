import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';

// The website settings that decide whether a browser event is kept. Each rule is a small pure
// function so the order of the checks reads in one place (dropReason).

export type DropReason =
  | 'bot'
  | 'excluded-ip'
  | 'excluded-country'
  | 'excluded-hostname'
  | 'hostname-not-allowed'
  | 'excluded-path';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface WebsiteFilters {
  domain: string;
  allowedHostnames: string[];
  excludedHostnames: string[];
  excludedPaths: string[];
  excludedIps: string[];
  excludedCountries: string[];
}

export interface EventOrigin {
  userAgent: string;
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

/** Whether the address is one of the entries (single addresses or CIDR ranges, IPv4 or IPv6). */
export function addressExcluded(address: Address | null, entries: string[]): boolean {
  if (!address) return false;
  return entries.some((entry) => {
    try {
      const [parsed, prefix] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), null];
      const range = unwrap(parsed);
      if (range.kind() !== address.kind()) return false;
      const full = range.kind() === 'ipv4' ? 32 : 128;
      // A range written as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) covers the IPv4 range /8.
      const bits = prefix === null ? full : range === parsed ? prefix : Math.max(prefix - 96, 0);
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
  const bare = filters.domain.replace(/^www\./, '');
  if (hostname === bare || hostname === `www.${bare}`) return true;
  return filters.allowedHostnames.some((pattern) => hostMatches(hostname, pattern));
}

/** A whole-path match where `*` stands for any run of characters, slashes included. */
export function pathMatches(path: string, pattern: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(path);
}

/** Why the event must be dropped, or null to keep it. */
export function dropReason(origin: EventOrigin, filters: WebsiteFilters): DropReason | null {
  if (isBot(origin.userAgent)) return 'bot';
  if (addressExcluded(origin.address, filters.excludedIps)) return 'excluded-ip';
  if (origin.country && filters.excludedCountries.includes(origin.country)) return 'excluded-country';
  if (filters.excludedHostnames.some((pattern) => hostMatches(origin.hostname, pattern))) return 'excluded-hostname';
  if (!hostAccepted(origin.hostname, filters)) return 'hostname-not-allowed';
  if (filters.excludedPaths.some((pattern) => pathMatches(origin.path, pattern))) return 'excluded-path';
  return null;
}
