import { type Static, Type } from 'typebox';
import { Nullable, WebsiteRef } from '../../http/schemas.ts';

// POST /api/v1/identify (website-api.md section 4): who a visitor is, as the website's backend
// knows them. Fields beyond the named ones are the profile's metadata: strings, at most
// PROFILE_METADATA_MAX_KEYS of them, keys as goal metadata keys.

export const PROFILE_METADATA_MAX_KEYS = 20;
export const PROFILE_METADATA_VALUE_MAX = 255;
export const PROFILE_METADATA_KEY = /^[a-z0-9_-]{1,64}$/;
const NAMED_FIELDS = 4;

export const IdentifyBody = Type.Object(
  {
    datafast_visitor_id: Type.String({ minLength: 1, maxLength: 255, description: 'the datafast_visitor_id cookie of the visitor' }),
    user_id: Type.String({ minLength: 1, maxLength: 255, description: "the visitor's id in the website's own user base" }),
    name: Type.Optional(Nullable(Type.String({ maxLength: 255, description: "the user's display name" }))),
    image: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: "the URL of the user's picture" }))),
  },
  {
    additionalProperties: Type.String({ maxLength: PROFILE_METADATA_VALUE_MAX }),
    maxProperties: NAMED_FIELDS + PROFILE_METADATA_MAX_KEYS,
    description:
      `Any other field is kept as profile metadata: at most ${PROFILE_METADATA_MAX_KEYS}, names of a-z, 0-9, _ and - ` +
      `(up to 64 characters), string values up to ${PROFILE_METADATA_VALUE_MAX} characters.`,
    examples: [{ datafast_visitor_id: 'visitor-3f9a2c', user_id: 'user_1001', name: 'Ada Lovelace', plan: 'pro' }],
  },
);
export type IdentifyInput = Static<typeof IdentifyBody>;

export const IdentifyQuery = Type.Object({ websiteId: Type.Optional(WebsiteRef) }, { additionalProperties: false });

export const Identified = Type.Object({
  message: Type.String(),
  profileId: Type.String({ description: "the profile's id: the same for every identify of this visitor on this website" }),
});
export type IdentifiedView = Static<typeof Identified>;

/** `data` is an object here, as the hosted service answers it. */
export const IdentifiedEnvelope = Type.Object({ status: Type.Literal('success'), data: Identified });
