// Numbers, money and dates as the reader's browser writes them (Intl), created once and reused.

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function numberFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `n${JSON.stringify(options)}`;
  let format = cache.get(key) as Intl.NumberFormat | undefined;
  if (!format) cache.set(key, (format = new Intl.NumberFormat(undefined, options)));
  return format;
}

function dateFormat(options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `d${JSON.stringify(options)}`;
  let format = cache.get(key) as Intl.DateTimeFormat | undefined;
  if (!format) cache.set(key, (format = new Intl.DateTimeFormat(undefined, options)));
  return format;
}

/** 12,345 (grouped, no decimals beyond `maximumFractionDigits`, default 0). */
export function formatNumber(value: number | null | undefined, maximumFractionDigits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return numberFormat({ maximumFractionDigits }).format(value);
}

/** 12.3k, 4.5M: for tight places (chart axes, cards). */
export function formatCompact(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return numberFormat({ notation: 'compact', maximumFractionDigits: 1 }).format(value);
}

/** A ratio (0.123) or a percentage (12.3, with `isRatio: false`) as "12.3%". */
export function formatPercent(value: number | null | undefined, isRatio = false): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return numberFormat({ style: 'percent', maximumFractionDigits: 1 }).format(isRatio ? value : value / 100);
}

/** An amount in an ISO-4217 currency: "$1,234.50". */
export function formatCurrency(value: number | null | undefined, currency = 'USD'): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  try {
    return numberFormat({ style: 'currency', currency, maximumFractionDigits: 2 }).format(value);
  } catch {
    return `${formatNumber(value, 2)} ${currency}`;
  }
}

/** A duration in seconds as "1h 2m", "3m 4s" or "12s". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '–';
  const total = Math.round(seconds);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = total % 60;
  if (hours) return `${hours}h ${minutes}m`;
  if (minutes) return `${minutes}m ${rest}s`;
  return `${rest}s`;
}

function toDate(value: string | number | Date): Date {
  return value instanceof Date ? value : new Date(value);
}

/** "21 May 2026" in the reader's locale (and time zone, unless `timeZone` is given). */
export function formatDate(value: string | number | Date | null | undefined, timeZone?: string): string {
  if (value === null || value === undefined) return '–';
  return dateFormat({ dateStyle: 'medium', timeZone }).format(toDate(value));
}

/** "21 May 2026, 14:05". */
export function formatDateTime(value: string | number | Date | null | undefined, timeZone?: string): string {
  if (value === null || value === undefined) return '–';
  return dateFormat({ dateStyle: 'medium', timeStyle: 'short', timeZone }).format(toDate(value));
}
