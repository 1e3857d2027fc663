import { type Static, Type } from 'typebox';
import { GRANTS } from '../../auth/permissions.ts';
import { Id, NullableTimestamp, Timestamp } from '../../http/schemas.ts';

export const Grant = Type.Enum([...GRANTS], { description: 'a permission name, or * for all' });

export const AccessToken = Type.Object({
  id: Id,
  _id: Id,
  name: Type.String(),
  displayKey: Type.String(),
  permissions: Type.Array(Type.String()),
  websiteIds: Type.Array(Id),
  expiresAt: NullableTimestamp,
  lastUsedAt: NullableTimestamp,
  createdAt: Timestamp,
});
export type AccessTokenView = Static<typeof AccessToken>;

export const CreatedAccessToken = Type.Object({
  ...AccessToken.properties,
  token: Type.String({ description: 'the raw dft_ token; shown in this response only' }),
});

export const CreateAccessTokenBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    permissions: Type.Optional(Type.Array(Grant, { uniqueItems: true, maxItems: GRANTS.length })),
    websiteIds: Type.Optional(Type.Array(Id, { uniqueItems: true, maxItems: 1000 })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'optional expiry, in the future' })),
  },
  // No expiresAt or websiteIds: a fixed date goes stale and ids differ per server.
  { additionalProperties: false, examples: [{ name: 'Reporting script', permissions: ['analytics:read', 'websites:read'] }] },
);
export type CreateAccessTokenInput = Static<typeof CreateAccessTokenBody>;

export const TokenParams = Type.Object({ tokenId: Id }, { additionalProperties: false });
