import { stripUrlSecrets } from '../../http/redaction.ts';
import type { EventDetails } from './event.types.ts';
import type { Versions } from './ingest.device.ts';
import type { Location } from './ingest.geo.ts';
import { classifyReferrer } from './ingest.referrer.ts';
import type { IngestEventInput } from './ingest.schemas.ts';

// What a browser event carries beyond its core fields, for the website API's breakdowns and
// visitor pages (website-api.md section 5): campaign parameters of the page URL, the referrer's
// host and source name, versions, viewport, the place, and an outbound link's target.

const MAX_PARAM_LENGTH = 255;
const MAX_VIEWPORT = 100_000;

/** The page URL's campaign parameters (utm_*, ref, source, via); empty values count as absent. */
export function campaignOf(url: URL): Pick<EventDetails, 'utmSource' | 'utmMedium' | 'utmCampaign' | 'utmTerm' | 'utmContent' | 'refParam' | 'sourceParam' | 'viaParam'> {
  const param = (name: string) => {
    const value = url.searchParams.get(name)?.trim();
    return value ? value.slice(0, MAX_PARAM_LENGTH) : null;
  };
  return {
    utmSource: param('utm_source'),
    utmMedium: param('utm_medium'),
    utmCampaign: param('utm_campaign'),
    utmTerm: param('utm_term'),
    utmContent: param('utm_content'),
    refParam: param('ref'),
    sourceParam: param('source'),
    viaParam: param('via'),
  };
}

const pixels = (value: number | undefined): number | null =>
  value === undefined || !Number.isFinite(value) ? null : Math.min(Math.round(value), MAX_VIEWPORT);

/** An outbound link's target as scheme, host and path: its query could carry the visitor's secret. */
function linkTarget(input: IngestEventInput): string | null {
  if (input.type !== 'external_link') return null;
  const url = input.extraData?.url;
  return typeof url === 'string' ? stripUrlSecrets(url) || null : null;
}

export function eventDetails(input: IngestEventInput, url: URL, hostname: string, versions: Versions, place: Location): EventDetails {
  const referrer = classifyReferrer(input.referrer, hostname);
  return {
    region: place.region,
    city: place.city,
    ...versions,
    viewportWidth: pixels(input.viewport?.width),
    viewportHeight: pixels(input.viewport?.height),
    referrerHost: referrer.host,
    referrerSource: referrer.source,
    ...campaignOf(url),
    linkUrl: linkTarget(input),
  };
}
