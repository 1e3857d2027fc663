import { type Static, Type } from 'typebox';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/passwords.ts';
import { Id, Nullable, Timestamp } from '../../http/schemas.ts';

/** A shared link's secret: the last part of its URL (/share/<slug>). */
export const SLUG_PATTERN = '^shr_[0-9A-Za-z]{32}$';
export const MAX_SHARED_LINKS_PER_WEBSITE = 20;

const LinkName = Type.String({ minLength: 1, maxLength: 100, description: 'what the link is for, e.g. "Investors"' });
const LinkPassword = Type.String({
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  description: `asked before the dashboard shows (${PASSWORD_MIN_LENGTH}-${PASSWORD_MAX_LENGTH} characters); stored hashed, never returned`,
});

export const SharedLink = Type.Object({
  id: Id,
  _id: Id,
  websiteId: Id,
  name: Type.String(),
  displaySlug: Type.String({ description: 'the link secret, masked; the full URL is shown once, on creation' }),
  hasPassword: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type SharedLinkView = Static<typeof SharedLink>;

export const SharedLinkWithSecret = Type.Object({
  ...SharedLink.properties,
  slug: Type.String({ description: 'the raw secret of the link; shown in this response only' }),
  url: Type.String({ description: 'the public URL of the shared dashboard (PUBLIC_URL + /share/<slug>); shown in this response only' }),
});

export const CreateSharedLinkBody = Type.Object(
  { name: LinkName, password: Type.Optional(LinkPassword) },
  { additionalProperties: false, examples: [{ name: 'Investors', password: 'correct horse battery' }] },
);
export type CreateSharedLinkInput = Static<typeof CreateSharedLinkBody>;

export const UpdateSharedLinkBody = Type.Object(
  { name: Type.Optional(LinkName), password: Type.Optional(Nullable(LinkPassword)) },
  { additionalProperties: false, minProperties: 1, examples: [{ password: null }, { name: 'Team wall screen' }] },
);
export type UpdateSharedLinkInput = Static<typeof UpdateSharedLinkBody>;

export const SharedLinkParams = Type.Object({ websiteId: Id, sharedLinkId: Id }, { additionalProperties: false });

export const Revoked = Type.Object({ revoked: Type.Boolean() });
