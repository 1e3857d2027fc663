import ipaddr from 'ipaddr.js';
import { canonicalTimeZone } from './time-zones.ts';

// Value rules a JSON Schema cannot express well. Each returns the normalised value, or null
// when the value is not acceptable.

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A bare host name: no scheme, path, port or trailing dot; at least two labels. */
export function normaliseHostname(value: string): string | null {
  const host = value.trim().toLowerCase();
  if (host.length > 253) return null;
  const labels = host.split('.');
  if (labels.length < 2 && host !== 'localhost') return null;
  return labels.every((label) => HOST_LABEL.test(label)) ? host : null;
}

/** A host name that may start with "*." to match every sub-domain. */
export function normaliseHostPattern(value: string): string | null {
  const wildcard = value.startsWith('*.');
  const host = normaliseHostname(wildcard ? value.slice(2) : value);
  return host === null ? null : (wildcard ? '*.' : '') + host;
}

/** An IANA time-zone name, returned in its canonical current spelling (UTC offsets are refused). */
export function normaliseTimezone(value: string): string | null {
  return canonicalTimeZone(value);
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function normaliseCurrency(value: string): string | null {
  const code = value.toUpperCase();
  return /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code) ? code : null;
}

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
// Region codes ICU knows that are not countries.
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'ZZ']);

/** An ISO-3166 alpha-2 country code, upper case. */
export function normaliseCountry(value: string): string | null {
  const code = value.toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || NOT_COUNTRIES.has(code)) return null;
  return REGION_NAMES.of(code) ? code : null;
}

/** An IPv4 or IPv6 address, or a CIDR range of either, in canonical form. */
export function normaliseIpOrCidr(value: string): string | null {
  try {
    if (value.includes('/')) {
      const [address, prefix] = ipaddr.parseCIDR(value);
      return `${address.toString()}/${prefix}`;
    }
    return ipaddr.isValid(value) ? ipaddr.parse(value).toString() : null;
  } catch {
    return null;
  }
}

/** A path that starts with "/", where "*" is a wildcard. */
export function normalisePathPattern(value: string): string | null {
  return /^\/[^\s?#]*$/.test(value) ? value : null;
}

// The same rule as Ajv's "email" format, so the CLI and the API agree on what an address is.
const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

export function normaliseEmail(value: string): string | null {
  const email = value.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : null;
}
