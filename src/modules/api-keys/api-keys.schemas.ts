import { type Static, Type } from 'typebox';
import { Id, NullableTimestamp, Timestamp } from '../../http/schemas.ts';

export const ApiKey = Type.Object({
  id: Id,
  _id: Id,
  websiteId: Id,
  name: Type.String(),
  displayKey: Type.String(),
  lastUsedAt: NullableTimestamp,
  createdAt: Timestamp,
});
export type ApiKeyView = Static<typeof ApiKey>;

export const ApiKeyWithSecret = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'the raw df_ key; shown in this response only' }),
});

export const CreateApiKeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false, examples: [{ name: 'Billing backend' }] },
);

export const ApiKeyParams = Type.Object({ websiteId: Id, apiKeyId: Id }, { additionalProperties: false });

export const Deleted = Type.Object({ deleted: Type.Boolean() });
