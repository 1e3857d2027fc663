import { type Static, Type } from 'typebox';
import { Nullable, WebsiteRef } from '../../http/schemas.ts';

// Who a visitor is, as the website knows them (website-api.md sections 4 and 7): POST
// /api/v1/identify from the website's backend, and the `identify` event the datafast SDK posts to
// /api/events from the browser. Both carry the same fields under the same rules; fields beyond the
// named ones are the profile's metadata: strings, at most PROFILE_METADATA_MAX_KEYS of them, keys
// as goal metadata keys.

export const PROFILE_METADATA_MAX_KEYS = 20;
export const PROFILE_METADATA_VALUE_MAX = 255;
export const PROFILE_METADATA_KEY = /^[a-z0-9_-]{1,64}$/;

const IdentityFields = {
  user_id: Type.String({ minLength: 1, maxLength: 255, description: "the visitor's id in the website's own user base" }),
  name: Type.Optional(Nullable(Type.String({ maxLength: 255, description: "the user's display name (empty reads as none)" }))),
  image: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: "the URL of the user's picture (empty reads as none)" }))),
};

/** The rules on the fields beyond `named` ones: string values, and a bound on their number. */
function metadataRules(named: number) {
  return {
    additionalProperties: Type.String({ maxLength: PROFILE_METADATA_VALUE_MAX }),
    maxProperties: named + PROFILE_METADATA_MAX_KEYS,
    description:
      `Any other field is kept as profile metadata: at most ${PROFILE_METADATA_MAX_KEYS}, names of a-z, 0-9, _ and - ` +
      `(up to 64 characters), string values up to ${PROFILE_METADATA_VALUE_MAX} characters.`,
  };
}

/** The `extraData` of an identify event: the visitor is the event's own. */
export const IdentityBody = Type.Object(IdentityFields, metadataRules(Object.keys(IdentityFields).length));
export type IdentityInput = Static<typeof IdentityBody>;

export const IdentifyBody = Type.Object(
  {
    datafast_visitor_id: Type.String({ minLength: 1, maxLength: 255, description: 'the datafast_visitor_id cookie of the visitor' }),
    ...IdentityFields,
  },
  {
    ...metadataRules(Object.keys(IdentityFields).length + 1),
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
