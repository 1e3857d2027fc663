import { currencyDigits, fromMinorUnits, toMinorUnits } from '../../../lib/money.ts';
import { providerError } from './scrub.ts';
import type { WebhookHeaders } from './adapter.ts';

// Small readers shared by the adapters: credential fields, headers, attribution metadata and
// amounts. Provider payloads are untrusted JSON, so every reader checks the type it gets.

/** The metadata keys the hosted service's guides tell sites to pass at checkout. */
export const VISITOR_KEY = 'datafast_visitor_id';
export const SESSION_KEY = 'datafast_session_id';

export function requireCredential(credentials: Record<string, string>, field: string): string {
  const value = credentials[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw providerError('invalid', null, `the credential field ${field} is missing`, credentials);
  }
  return value.trim();
}

export function headerValue(headers: WebhookHeaders, name: string): string | null {
  const value = headers[name.toLowerCase()] ?? headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : null;
}

export type Json = Record<string, unknown>;

export function asObject(value: unknown): Json | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

/** A non-empty string (numbers are ids too: Shopify and WooCommerce send numeric ids). */
export function text(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

export function joinName(...parts: unknown[]): string | null {
  const name = parts.map(text).filter((part) => part !== null).join(' ');
  return name === '' ? null : name;
}

/** The visitor and session ids from a metadata object (string values only). */
export function attributionFrom(metadata: unknown): { visitorId: string | null; sessionId: string | null } {
  const object = asObject(metadata);
  return { visitorId: text(object?.[VISITOR_KEY]), sessionId: text(object?.[SESSION_KEY]) };
}

/** Metadata given as a list of name/value pairs (Shopify note attributes, WooCommerce meta_data). */
export function pairsToObject(pairs: unknown, nameKey: string, valueKey: string): Json {
  const object: Json = {};
  if (!Array.isArray(pairs)) return object;
  for (const pair of pairs) {
    const entry = asObject(pair);
    const name = text(entry?.[nameKey]);
    if (name !== null && !(name in object)) object[name] = entry?.[valueKey];
  }
  return object;
}

export function upperCurrency(value: unknown): string | null {
  const code = text(value)?.toUpperCase() ?? null;
  return code !== null && /^[A-Z]{3}$/.test(code) ? code : null;
}

/** An integer count of minor units (number or digit string, as Paddle sends) in major units. */
export function majorFromMinor(value: unknown, currency: string): number | null {
  const minor = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof minor !== 'number' || !Number.isSafeInteger(minor)) return null;
  return fromMinorUnits(minor, currency);
}

/** A decimal string in major units ("199.00", as Shopify and WooCommerce send), checked against the currency's digits. */
export function majorFromDecimal(value: unknown, currency: string): number | null {
  const raw = typeof value === 'number' ? String(value) : text(value);
  if (raw === null || !/^\d+(?:\.\d+)?$/.test(raw)) return null;
  // "199.00" for JPY has more digits than the currency but no value in them: round to its digits.
  const amount = Number(raw);
  const digits = currencyDigits(currency);
  const rounded = Number(amount.toFixed(digits));
  return toMinorUnits(rounded, currency).ok ? rounded : null;
}

/** An ISO-8601 instant or epoch seconds as a Date; null when it is neither. */
export function instant(value: unknown): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value * 1000);
  const raw = text(value);
  if (raw === null) return null;
  const at = new Date(raw);
  return Number.isNaN(at.getTime()) ? null : at;
}

/**
 * The provider's conversion of a payment in `currency` into `into`: `minor` is a count of minor
 * units of `into` (number or digit string). Null when it is missing or not one, or when `into`
 * is the payment's own currency (nothing was converted).
 */
export function conversionFromMinor(minor: unknown, into: unknown, currency: string): { amountMinor: number; currency: string } | null {
  const target = upperCurrency(into);
  const amount = typeof minor === 'string' && /^-?\d+$/.test(minor.trim()) ? Number(minor) : minor;
  if (target === null || target === currency || typeof amount !== 'number' || !Number.isSafeInteger(amount)) return null;
  return { amountMinor: amount, currency: target };
}

/** As conversionFromMinor, for a decimal string in major units of `into` ("199.00", Shopify's money). */
export function conversionFromDecimal(value: unknown, into: unknown, currency: string): { amountMinor: number; currency: string } | null {
  const target = upperCurrency(into);
  if (target === null || target === currency) return null;
  const amount = majorFromDecimal(value, target);
  if (amount === null) return null;
  const minor = toMinorUnits(amount, target);
  return minor.ok ? { amountMinor: minor.minor, currency: target } : null;
}

/** A payment's `converted` field when the provider sent a conversion; nothing otherwise. */
export function withConversion(converted: { amountMinor: number; currency: string } | null): { converted?: { amountMinor: number; currency: string } } {
  return converted ? { converted } : {};
}
