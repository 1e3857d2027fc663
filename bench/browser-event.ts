// One event's request as the datafast browser SDK (v3) sends it: the bench's ingestion parts and
// the soak build their bodies with it.

export const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Who sends an event and from where, as the SDK's cookies and the page know it. */
export interface BrowserVisit {
  visitorId: string;
  sessionId: string;
  visitorFirstSeenAt: string;
  visitorSessionNumber: number;
  href: string;
  referrer: string | null;
  userAgent: string;
}

/** One event's body as the datafast web SDK (v3) posts it: a pageview, or a goal with `extraData`. */
export function browserEvent(website: { trackingId: string; domain: string }, visit: BrowserVisit, goal?: { eventName: string; [property: string]: string }) {
  return JSON.stringify({
    websiteId: website.trackingId,
    domain: website.domain,
    visitorId: visit.visitorId,
    sessionId: visit.sessionId,
    visitorFirstSeenAt: visit.visitorFirstSeenAt,
    visitorSessionNumber: visit.visitorSessionNumber,
    href: visit.href,
    referrer: visit.referrer,
    type: goal ? 'custom' : 'pageview',
    ...(goal ? { extraData: goal } : {}),
    viewport: { width: 1280, height: 720 },
    language: 'en-US',
    timezone: 'Europe/Paris',
    screenWidth: 1920,
    screenHeight: 1080,
    device: { platform: 'web', osVersion: visit.userAgent, model: 'Browser' },
  });
}
