import { type Static, Type } from 'typebox';
import { GoalName } from '../../http/schemas.ts';
import { IdentityBody } from '../identify/identify.schemas.ts';

// The event the public `datafast` web SDK (v3) posts to /api/events, field by field as its
// `buildBasePayload` writes it. Fields the SDK sends that we do not store (viewport, language,
// ...) are modelled loosely so a wrong type is still a 400 naming the field, and fields we do not
// know at all are accepted and ignored: the SDK keeps adding fields (visitorFirstSeenAt,
// adClickIds came late) and drops an event after three refused sends, so a strict schema would
// silently lose real traffic after an SDK upgrade.

export const INGEST_BODY_LIMIT = 16 * 1024;
export const DROPPED_HEADER = 'x-sightline-dropped';
export const MAX_CUSTOM_PROPERTIES = 10;

export const EVENT_TYPES = ['pageview', 'custom', 'identify', 'payment', 'external_link'] as const;

const Url = Type.String({ minLength: 1, maxLength: 4096 });
const ClientId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$', description: 'printable ASCII, no spaces' });
const ShortText = Type.String({ maxLength: 1024 });
const Size = Type.Number({ minimum: 0 });

/** `custom`: the goal name plus at most 10 string properties (checked in the service). */
const CustomExtraData = Type.Object(
  { eventName: GoalName },
  { additionalProperties: Type.String({ maxLength: 255 }) },
);
const ExternalLinkExtraData = Type.Object({ url: Url, text: Type.Optional(ShortText) });
const PaymentExtraData = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254 })),
  amount: Type.Optional(Type.Union([Type.Number(), Type.String({ maxLength: 32 })])),
  currency: Type.Optional(Type.String({ maxLength: 8 })),
});

/** The shape `extraData` must have for one event type (a JSON Schema if/then per type). */
function extraDataFor(type: (typeof EVENT_TYPES)[number], schema: ReturnType<typeof Type.Object>) {
  return {
    if: Type.Object({ type: Type.Literal(type) }, { required: ['type'] }),
    then: Type.Object({ extraData: schema }, { required: ['extraData'] }),
  };
}

export const IngestEventBody = Type.Object(
  {
    websiteId: Type.String({ minLength: 1, maxLength: 64, description: "the website's trackingId or id" }),
    domain: Type.Optional(Type.String({ maxLength: 253 })),
    href: Url,
    referrer: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
    visitorId: Type.Optional(ClientId),
    sessionId: Type.Optional(Type.Union([ClientId, Type.Null()])),
    type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))),
    extraData: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    cookieless: Type.Optional(Type.Boolean()),
    visitorFirstSeenAt: Type.Optional(Type.String({ maxLength: 64 })),
    visitorSessionNumber: Type.Optional(Type.Integer({ minimum: 0 })),
    viewport: Type.Optional(Type.Object({ width: Type.Optional(Size), height: Type.Optional(Size) })),
    screenWidth: Type.Optional(Size),
    screenHeight: Type.Optional(Size),
    language: Type.Optional(Type.String({ maxLength: 64 })),
    timezone: Type.Optional(Type.String({ maxLength: 64 })),
    device: Type.Optional(
      Type.Object({ platform: Type.Optional(ShortText), osVersion: Type.Optional(ShortText), model: Type.Optional(ShortText) }),
    ),
    adClickIds: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 512 }))),
  },
  {
    additionalProperties: true,
    // websiteId: the trackingId that createWebsite answered (the script's data-website-id).
    examples: [
      {
        websiteId: 'dfid_replaceWithYourTrackingId',
        domain: 'example.com',
        href: 'https://example.com/pricing',
        referrer: 'https://www.google.com/',
        visitorId: 'visitor-3f9a2c',
        sessionId: 'session-71b0e4',
        type: 'pageview',
      },
    ],
    allOf: [
      extraDataFor('custom', CustomExtraData),
      // The same identity, under the same rules, as POST /api/v1/identify takes.
      extraDataFor('identify', IdentityBody),
      extraDataFor('external_link', ExternalLinkExtraData),
      extraDataFor('payment', PaymentExtraData),
    ],
  },
);
export type IngestEventInput = Static<typeof IngestEventBody>;

export const IngestResult = Type.Object({
  status: Type.Literal('success'),
  eventId: Type.Optional(Type.String()),
  /** The id the event was stored under (the server-derived one for cookieless websites). */
  visitorId: Type.Optional(Type.String()),
  /** identify: the visitor's profile, as POST /api/v1/identify answers it (no event is stored). */
  profileId: Type.Optional(Type.String()),
  /** Why the event was not stored; the same reason is in the X-Sightline-Dropped header. */
  dropped: Type.Optional(Type.String()),
});
export type IngestResultView = Static<typeof IngestResult>;
