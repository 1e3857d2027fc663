import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { invalidField, notFound } from '../../errors.ts';
import { stripUrlSecrets } from '../../http/redaction.ts';
import { normaliseCountry } from '../../lib/formats.ts';
import { memoByString } from '../../lib/memo.ts';
import { type Identity, identifyVisitor, readIdentity } from '../identify/identify.service.ts';
import type { IdentityInput } from '../identify/identify.schemas.ts';
import type { EventLog } from './event-log.ts';
import type { EventWriter } from './event-writer.ts';
import type { NewEvent, RecordedEvent } from './event.types.ts';
import { eventDetails } from './ingest.details.ts';
import { userAgentFacts } from './ingest.device.ts';
import { locate } from './ingest.geo.ts';
import { type DropReason, dropReason, parseAddress } from './ingest.filters.ts';
import { findIngestWebsite } from './ingest.repository.ts';
import { type IngestEventInput, MAX_CUSTOM_PROPERTIES } from './ingest.schemas.ts';
import { type DailySalts, cookielessVisitorId } from './ingest.visitor-id.ts';

export interface IngestDeps {
  db: Kysely<Database>;
  events: EventWriter;
  /** Where identify looks the visitor up. */
  eventLog: EventLog;
  salts: DailySalts;
}

/** What the request says about who sent the event (never stored as such). */
export interface IngestClient {
  /** request.ip: the socket address, or the forwarded one when TRUST_PROXY is set. */
  address: string;
  userAgent: string;
  /** The raw value of the trusted country header, if any. */
  country: string | undefined;
}

/** An identify event is no event: it only creates or replaces the visitor's profile. */
export type IngestOutcome = { dropped: DropReason } | { event: RecordedEvent } | { identified: { visitorId: string; profileId: string } };

const PROPERTY_NAME = /^[a-z0-9_-]{1,64}$/;
const MAX_OTHER_PROPERTIES = 20;
const MAX_VALUE_LENGTH = 255;

function parseHref(href: string): URL {
  try {
    const url = new URL(href);
    if (url.hostname !== '') return url;
  } catch {
    // reported below
  }
  throw invalidField('body.href', 'must be an absolute URL with a host, such as https://example.com/pricing');
}

/** `custom`: the goal's properties, names lower-cased as the SDK does (its eventName is the goal). */
function customProperties(extraData: Record<string, unknown>): Record<string, string> | null {
  const entries = Object.entries(extraData).filter(([key]) => key !== 'eventName');
  if (entries.length > MAX_CUSTOM_PROPERTIES) {
    throw invalidField('body.extraData', `must have at most ${MAX_CUSTOM_PROPERTIES} properties besides eventName`);
  }
  const properties: Record<string, string> = {};
  for (const [key, value] of entries) {
    const name = key.toLowerCase();
    if (!PROPERTY_NAME.test(name)) {
      throw invalidField('body.extraData', 'property names must be 1-64 characters of letters, digits, _ and -');
    }
    properties[name] = value as string;
  }
  return entries.length > 0 ? properties : null;
}

/** Other types: the SDK's flat details (user_id, url, email, amount...), as strings. */
function otherProperties(extraData: Record<string, unknown> | undefined): Record<string, string> | null {
  const properties: Record<string, string> = {};
  for (const [key, value] of Object.entries(extraData ?? {})) {
    if (Object.keys(properties).length === MAX_OTHER_PROPERTIES) break;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      properties[key.slice(0, 64)] = String(value).slice(0, MAX_VALUE_LENGTH);
    }
  }
  return Object.keys(properties).length > 0 ? properties : null;
}

/**
 * The referrer is another site's URL, and its query string, fragment or user info may carry a
 * visitor's secret (a reset token, an OAuth fragment): only scheme, host and path are kept, with
 * credential-shaped path segments masked.
 */
function keptReferrer(referrer: string | null | undefined): string | null {
  return referrer ? strippedReferrer(referrer) || null : null;
}

// A site's referrers repeat (a search engine, a newsletter), and masking one took about 3 % of
// ingestion's CPU.
const strippedReferrer = memoByString(stripUrlSecrets, { max: 2000, maxInputLength: 512 });

/** Validates, filters by the website's settings, and records one browser event. */
export async function ingestEvent(deps: IngestDeps, input: IngestEventInput, client: IngestClient): Promise<IngestOutcome> {
  const website = await findIngestWebsite(deps.db, input.websiteId);
  if (!website) throw notFound('Website not found');

  const url = parseHref(input.href);
  const name = input.type === 'custom' ? String(input.extraData?.eventName) : null;
  const metadata = input.type === 'custom' ? customProperties(input.extraData ?? {}) : otherProperties(input.extraData);
  // The schema made extraData an identity for this type (IdentityBody); the rest of the checks are identify's own.
  const identity: Identity | null = input.type === 'identify' ? readIdentity(input.extraData as IdentityInput, 'body.extraData') : null;
  const cookieless = website.isCookieless || input.cookieless === true;
  if (!cookieless && input.visitorId === undefined) throw invalidField('body.visitorId', 'is required');

  const hostname = url.hostname.toLowerCase().replace(/\.$/, '');
  const { filters } = website;
  // The address is parsed only where it is used: address filters and cookieless ids.
  const address = cookieless || filters.excludedIps.length > 0 ? parseAddress(client.address) : null;
  // The trusted header (a CDN's) wins over the IP database; region and city come from the
  // database only where both agree on the country.
  const headerCountry = client.country ? normaliseCountry(client.country.trim()) : null;
  const located = locate(client.address);
  const place = headerCountry && located.countryCode !== headerCountry ? { countryCode: headerCountry, region: null, city: null } : located;
  const country = place.countryCode;
  const agent = userAgentFacts(client.userAgent);
  const dropped = dropReason({ bot: agent.bot, address, country, hostname, path: url.pathname }, filters);
  if (dropped) return { dropped };

  const visitorId = cookieless
    ? cookielessVisitorId(await deps.salts.current(), website.id, address?.toString() ?? client.address, client.userAgent)
    : input.visitorId!;
  if (identity) {
    // Exactly what POST /api/v1/identify does: not a page view, and nothing a session counts.
    const { profileId } = await identifyVisitor(deps.db, deps.eventLog, website.id, visitorId, identity);
    return { identified: { visitorId, profileId } };
  }
  const event: NewEvent = {
    websiteId: website.id,
    type: input.type,
    name,
    visitorId,
    sessionId: input.sessionId ?? null,
    hostname,
    path: url.pathname,
    referrer: keptReferrer(input.referrer),
    country,
    ...agent.device,
    metadata,
    source: 'browser',
    occurredAt: new Date().toISOString(),
    details: eventDetails(input, url, hostname, agent.versions, place),
  };
  const [recorded] = await deps.events.write([event]);
  return { event: recorded! };
}
