import { randomUUID } from 'node:crypto';
import type { TestApp } from './app.ts';

// Browser events as the datafast SDK posts them to /api/events, for the tests of ingestion and of the reads over it.

export const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
export const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
export const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
export const CLIENT_IP = '198.51.100.7';

export type Website = { id: string; domain: string; trackingId: string };

export interface SendOptions {
  ip?: string;
  userAgent?: string | null;
  headers?: Record<string, string>;
  contentType?: string;
  /** Sent as is instead of the JSON body. */
  payload?: string;
}

/** POST /api/events the way a browser does: a real user agent, from a client address. */
export async function send(t: TestApp, body: unknown, options: SendOptions = {}) {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', ...options.headers };
  if (options.userAgent !== null) headers['user-agent'] = options.userAgent ?? CHROME;
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/events',
    remoteAddress: options.ip ?? CLIENT_IP,
    headers,
    payload: options.payload ?? JSON.stringify(body),
  });
  let json: any = null;
  try {
    json = response.json();
  } catch {
    json = null;
  }
  return { status: response.statusCode, body: json, headers: response.headers, raw: response.body };
}

/** A pageview as the datafast SDK builds it (buildBasePayload). */
export function pageview(website: Website, overrides: Record<string, unknown> = {}) {
  return {
    websiteId: website.trackingId,
    domain: website.domain,
    visitorId: randomUUID(),
    sessionId: `s${randomUUID()}`,
    visitorFirstSeenAt: new Date().toISOString(),
    visitorSessionNumber: 1,
    href: `https://${website.domain}/pricing?utm_source=news`,
    referrer: 'https://news.example.org/item?id=1',
    type: 'pageview',
    viewport: { width: 1280, height: 720 },
    language: 'en-US',
    timezone: 'Europe/Paris',
    screenWidth: 1920,
    screenHeight: 1080,
    device: { platform: 'web', osVersion: CHROME, model: 'Browser' },
    ...overrides,
  };
}

export function goal(website: Website, eventName: string, properties: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) {
  return pageview(website, { type: 'custom', referrer: null, extraData: { eventName, ...properties }, ...overrides });
}
