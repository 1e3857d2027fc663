import type { RecordedEvent } from '../../db/event-records.ts';
import type { RecordType } from './sightline-export.ts';

// One record line of Sightline's export (docs/export-format.md) checked and turned into the row
// the target website stores. Values are as the exporting installation stored them; a record that
// lacks what its row needs (an id, a valid instant, a known event type) is skipped and counted
// as invalid_record in the report, never stored half.

type Data = Record<string, unknown>;

export class InvalidRecord extends Error {}

const EVENT_TYPES = new Set(['pageview', 'custom', 'identify', 'payment', 'external_link']);
const EVENT_SOURCES = new Set(['browser', 'api']);
const MAX_TEXT = 64 * 1024;

function text(data: Data, name: string): string {
  const value = data[name];
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) throw new InvalidRecord(`${name} must be a non-empty text`);
  return value;
}

function nullableText(data: Data, name: string): string | null {
  const value = data[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw new InvalidRecord(`${name} must be a text or null`);
  return value;
}

function nullableInteger(data: Data, name: string): number | null {
  const value = data[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new InvalidRecord(`${name} must be a whole number or null`);
  return value;
}

function integer(data: Data, name: string): number {
  const value = nullableInteger(data, name);
  if (value === null) throw new InvalidRecord(`${name} must be a whole number`);
  return value;
}

/** An instant as both engines store it: ISO-8601 UTC with milliseconds. */
function instant(data: Data, name: string, fallback?: string): string {
  const value = data[name] ?? fallback;
  if (typeof value !== 'string') throw new InvalidRecord(`${name} must be an instant`);
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw new InvalidRecord(`${name} must be an instant`);
  return new Date(ms).toISOString();
}

/** true/false as the export writes them; 0/1 too, as a SQLite row would hold them. */
function bool(data: Data, name: string, fallback = false): boolean {
  const value = data[name];
  if (value === undefined || value === null) return fallback;
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  throw new InvalidRecord(`${name} must be true or false`);
}

/** JSON kept as text: parsed once to check it, stored as the same text. */
function jsonText(data: Data, name: string, nullable: boolean): string | null {
  const value = data[name];
  if (value === undefined || value === null) {
    if (nullable) return null;
    throw new InvalidRecord(`${name} must be JSON text`);
  }
  if (typeof value !== 'string') throw new InvalidRecord(`${name} must be JSON text`);
  try {
    JSON.parse(value);
  } catch {
    throw new InvalidRecord(`${name} must be JSON text`);
  }
  return value;
}

function metadataOf(data: Data): Record<string, string> | null {
  const raw = jsonText(data, 'metadata', true);
  if (raw === null) return null;
  const value = JSON.parse(raw) as unknown;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InvalidRecord('metadata must be a JSON object');
  return value as Record<string, string>;
}

/** The event, for the target website, keeping its original id (the caller picks the stored one). */
export function eventOf(data: Data, websiteId: string): RecordedEvent {
  const type = text(data, 'type');
  if (!EVENT_TYPES.has(type)) throw new InvalidRecord(`type ${JSON.stringify(type)} is not an event type`);
  const source = nullableText(data, 'source') ?? 'browser';
  if (!EVENT_SOURCES.has(source)) throw new InvalidRecord('source must be browser or api');
  return {
    id: text(data, 'id'),
    websiteId,
    type: type as RecordedEvent['type'],
    name: nullableText(data, 'name'),
    visitorId: text(data, 'visitor_id'),
    sessionId: nullableText(data, 'session_id'),
    hostname: nullableText(data, 'hostname'),
    path: nullableText(data, 'path'),
    referrer: nullableText(data, 'referrer'),
    country: nullableText(data, 'country'),
    browser: nullableText(data, 'browser'),
    os: nullableText(data, 'os'),
    device: nullableText(data, 'device'),
    metadata: metadataOf(data),
    source: source as RecordedEvent['source'],
    occurredAt: instant(data, 'occurred_at'),
    details: {
      region: nullableText(data, 'region'),
      city: nullableText(data, 'city'),
      browserVersion: nullableText(data, 'browser_version'),
      osVersion: nullableText(data, 'os_version'),
      viewportWidth: nullableInteger(data, 'viewport_width'),
      viewportHeight: nullableInteger(data, 'viewport_height'),
      referrerHost: nullableText(data, 'referrer_host'),
      referrerSource: nullableText(data, 'referrer_source'),
      utmSource: nullableText(data, 'utm_source'),
      utmMedium: nullableText(data, 'utm_medium'),
      utmCampaign: nullableText(data, 'utm_campaign'),
      utmTerm: nullableText(data, 'utm_term'),
      utmContent: nullableText(data, 'utm_content'),
      refParam: nullableText(data, 'ref_param'),
      sourceParam: nullableText(data, 'source_param'),
      viaParam: nullableText(data, 'via_param'),
      linkUrl: nullableText(data, 'link_url'),
      description: nullableText(data, 'description'),
    },
  };
}

export function paymentOf(data: Data, websiteId: string) {
  const currency = text(data, 'currency');
  if (!/^[A-Z]{3}$/.test(currency)) throw new InvalidRecord('currency must be an ISO-4217 code');
  const occurredAt = instant(data, 'occurred_at');
  const convertedCurrency = nullableText(data, 'converted_currency');
  const convertedMinor = nullableInteger(data, 'converted_minor');
  if ((convertedCurrency === null) !== (convertedMinor === null)) throw new InvalidRecord('converted_minor and converted_currency go together');
  return {
    id: text(data, 'id'),
    website_id: websiteId,
    transaction_id: text(data, 'transaction_id'),
    amount_minor: integer(data, 'amount_minor'),
    currency,
    visitor_id: nullableText(data, 'visitor_id'),
    email: nullableText(data, 'email'),
    renewal: bool(data, 'renewal'),
    refunded: bool(data, 'refunded'),
    occurred_at: occurredAt,
    created_at: instant(data, 'created_at', occurredAt),
    customer_id: nullableText(data, 'customer_id'),
    customer_name: nullableText(data, 'customer_name'),
    is_free_trial: bool(data, 'is_free_trial'),
    converted_minor: convertedMinor,
    converted_currency: convertedCurrency,
  };
}
export type PaymentRecord = ReturnType<typeof paymentOf>;

export function funnelOf(data: Data, websiteId: string) {
  const createdAt = instant(data, 'created_at');
  const steps = jsonText(data, 'steps', false)!;
  if (!Array.isArray(JSON.parse(steps))) throw new InvalidRecord('steps must be a JSON array');
  return {
    id: text(data, 'id'),
    website_id: websiteId,
    name: text(data, 'name'),
    slug: text(data, 'slug'),
    steps,
    is_active: bool(data, 'is_active', true),
    created_at: createdAt,
    updated_at: instant(data, 'updated_at', createdAt),
  };
}
export type FunnelRecord = ReturnType<typeof funnelOf>;

export function noteOf(data: Data, websiteId: string) {
  const createdAt = instant(data, 'created_at');
  return {
    id: text(data, 'id'),
    website_id: websiteId,
    author_id: null,
    text: text(data, 'text'),
    timestamp: instant(data, 'timestamp'),
    created_at: createdAt,
    updated_at: instant(data, 'updated_at', createdAt),
  };
}
export type NoteRecord = ReturnType<typeof noteOf>;

export function visitorProfileOf(data: Data, websiteId: string) {
  return {
    website_id: websiteId,
    visitor_id: text(data, 'visitor_id'),
    user_id: text(data, 'user_id'),
    name: nullableText(data, 'name'),
    image: nullableText(data, 'image'),
    metadata: jsonText(data, 'metadata', true),
    identified_at: instant(data, 'identified_at'),
    email: nullableText(data, 'email'),
  };
}
export type VisitorProfileRecord = ReturnType<typeof visitorProfileOf>;

export function goalCustomizationOf(data: Data, websiteId: string) {
  return {
    website_id: websiteId,
    goal_name: text(data, 'goal_name'),
    display_name: nullableText(data, 'display_name'),
    color: nullableText(data, 'color'),
    description: nullableText(data, 'description'),
    updated_at: instant(data, 'updated_at'),
  };
}
export type GoalCustomizationRecord = ReturnType<typeof goalCustomizationOf>;

export function currencyRateOf(data: Data, websiteId: string) {
  const rate = data.rate;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) throw new InvalidRecord('rate must be a positive number');
  return {
    website_id: websiteId,
    currency: text(data, 'currency'),
    to_currency: text(data, 'to_currency'),
    rate,
    updated_at: instant(data, 'updated_at'),
  };
}
export type CurrencyRateRecord = ReturnType<typeof currencyRateOf>;

/** The website's settings that change what the reads answer or what ingestion keeps (not its domain, name or tracking id: the installation's). */
export const SETTING_COLUMNS = [
  'timezone',
  'currency',
  'kpi',
  'kpi_color_scheme',
  'revenue_metric',
  'is_cookieless',
  'include_renewal_revenue',
  'allowed_hostnames',
  'excluded_ips',
  'excluded_paths',
  'excluded_countries',
  'excluded_hostnames',
] as const;

const BOOLEAN_SETTINGS = new Set(['is_cookieless', 'include_renewal_revenue']);
const JSON_SETTINGS = new Set(['allowed_hostnames', 'excluded_ips', 'excluded_paths', 'excluded_countries', 'excluded_hostnames']);

export function websiteSettingsOf(data: Data): Record<string, string | boolean | null> {
  const settings: Record<string, string | boolean | null> = {};
  for (const column of SETTING_COLUMNS) {
    if (!(column in data)) continue;
    if (BOOLEAN_SETTINGS.has(column)) settings[column] = bool(data, column);
    else if (JSON_SETTINGS.has(column)) settings[column] = jsonText(data, column, false);
    else if (column === 'kpi' || column === 'kpi_color_scheme') settings[column] = nullableText(data, column);
    else settings[column] = text(data, column);
  }
  return settings;
}

export type ParsedRecord =
  | { type: 'website'; row: Record<string, string | boolean | null> }
  | { type: 'event'; row: RecordedEvent }
  | { type: 'payment'; row: PaymentRecord }
  | { type: 'funnel'; row: FunnelRecord }
  | { type: 'note'; row: NoteRecord }
  | { type: 'visitorProfile'; row: VisitorProfileRecord }
  | { type: 'goalCustomization'; row: GoalCustomizationRecord }
  | { type: 'currencyRate'; row: CurrencyRateRecord };

const PARSERS: Record<RecordType, (data: Data, websiteId: string) => ParsedRecord['row']> = {
  website: (data) => websiteSettingsOf(data),
  event: eventOf,
  payment: paymentOf,
  funnel: funnelOf,
  note: noteOf,
  visitorProfile: visitorProfileOf,
  goalCustomization: goalCustomizationOf,
  currencyRate: currencyRateOf,
};

export const isRecordType = (type: unknown): type is RecordType => typeof type === 'string' && Object.hasOwn(PARSERS, type);

/** A record line's data for the target website; throws InvalidRecord when it cannot be stored. */
export function parseRecord(type: RecordType, data: unknown, websiteId: string): ParsedRecord {
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new InvalidRecord('data must be an object');
  return { type, row: PARSERS[type](data as Data, websiteId) } as ParsedRecord;
}
