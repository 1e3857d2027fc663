import { type Static, Type } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.ts';

export const Account = Type.Object({
  id: Id,
  _id: Id,
  name: Type.String(),
  email: Type.String(),
  plan: Type.Object({
    name: Type.String(),
    limits: Type.Object({
      tokensPerAccount: Type.Integer(),
      apiKeysPerWebsite: Type.Integer(),
      alertsPerWebsite: Type.Integer(),
    }),
  }),
  createdAt: Timestamp,
  websiteId: Type.Optional(Id),
});
export type AccountView = Static<typeof Account>;

export const UpdateAccountBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false, examples: [{ name: 'Ada Lovelace' }] },
);
