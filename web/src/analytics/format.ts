// Number, duration, money and date formatting for the analytics page (Intl, the browser's locale).

const whole = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const oneDecimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/** 1,234 below ten thousand, 12.3K and 4.5M above. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return Math.abs(value) >= 10_000 ? compact.format(value) : whole.format(value);
}

/** The full number, for a title beside a compact one. */
export function formatExact(value: number): string {
  return new Intl.NumberFormat().format(value);
}

/** A value already in percent: 12.5 -> "12.5%". */
export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return `${oneDecimal.format(value)}%`;
}

/** Milliseconds as "1h 2m", "1m 23s" or "45s". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds}s`;
  return `${seconds}s`;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** Major units of `currency`: 1234.5 USD -> "$1,234.50", compact from 10,000 ("$12.3K"). */
export function formatMoney(value: number | null | undefined, currency: string): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const big = Math.abs(value) >= 10_000;
  const key = `${currency}:${big}`;
  let format = moneyFormats.get(key);
  if (!format) {
    try {
      format = new Intl.NumberFormat(undefined, big ? { style: 'currency', currency, notation: 'compact' } : { style: 'currency', currency });
    } catch {
      format = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
    }
    moneyFormats.set(key, format);
  }
  return format.format(value);
}

let regionNames: Intl.DisplayNames | null | undefined;

/** "DE" -> "Germany" in the browser's language; the code itself when the browser cannot say. */
export function countryName(code: string): string {
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(undefined, { type: 'region' });
    } catch {
      regionNames = null;
    }
  }
  try {
    return regionNames?.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** "2026-05-03" -> "3 May 2026" (a calendar day, so formatted in UTC). */
export function formatDay(day: string, options: Intl.DateTimeFormatOptions = { day: 'numeric', month: 'short', year: 'numeric' }): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return new Intl.DateTimeFormat(undefined, { ...options, timeZone: 'UTC' }).format(date);
}

/** An instant as the website's local date and time. */
export function formatInstant(iso: string, timeZone: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(date);
  } catch {
    return date.toLocaleString();
  }
}

/** Capitalises the first letter ("mobile" -> "Mobile"). */
export function capitalise(text: string): string {
  return text ? text[0]!.toUpperCase() + text.slice(1) : text;
}
