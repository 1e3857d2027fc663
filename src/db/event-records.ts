// The raw event as the server holds it, below every module that writes or derives from it: the
// events module stores and ships these, the analytics module folds them into derived data.

/** An event ready to be stored: validated, filtered and enriched by its ingestion route. */
export interface NewEvent {
  websiteId: string;
  type: 'pageview' | 'custom' | 'identify' | 'payment' | 'external_link';
  /** The goal name for custom events; null otherwise. */
  name: string | null;
  visitorId: string;
  sessionId: string | null;
  hostname: string | null;
  path: string | null;
  referrer: string | null;
  country: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  metadata: Record<string, string> | null;
  source: 'browser' | 'api';
  occurredAt: string;
  /** What the website API reads besides (website-api.md section 5); left out means unknown. */
  details?: EventDetails;
}

export interface EventDetails {
  region?: string | null;
  city?: string | null;
  browserVersion?: string | null;
  osVersion?: string | null;
  viewportWidth?: number | null;
  viewportHeight?: number | null;
  referrerHost?: string | null;
  referrerSource?: string | null;
  utmSource?: string | null;
  utmMedium?: string | null;
  utmCampaign?: string | null;
  utmTerm?: string | null;
  utmContent?: string | null;
  refParam?: string | null;
  sourceParam?: string | null;
  viaParam?: string | null;
  linkUrl?: string | null;
  description?: string | null;
}

export interface RecordedEvent extends NewEvent {
  id: string;
}

/** A goal completion: a custom event with a name (works on stored rows too). */
export const isGoal = (event: { type: string; name: string | null }): boolean => event.type === 'custom' && event.name !== null;
