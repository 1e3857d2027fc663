import { Type } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.ts';

export const RateParams = Type.Object(
  {
    websiteId: Id,
    currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'an ISO-4217 code such as EUR (any case)', examples: ['EUR'] }),
  },
  { additionalProperties: false },
);

export const RateBody = Type.Object(
  {
    rate: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000_000,
      description: "units of the website's currency one unit of this currency is worth (1.08 for EUR on a USD website)",
    }),
  },
  { additionalProperties: false, examples: [{ rate: 1.08 }] },
);

export const Rate = Type.Object({
  currency: Type.String(),
  rate: Type.Number(),
  updatedAt: Timestamp,
});

export const Unconverted = Type.Object(
  {
    currency: Type.String(),
    payments: Type.Integer({ description: 'payments in it, not refunded' }),
    amount: Type.Number({ description: 'their sum, in that currency' }),
  },
  { description: 'a currency of recorded payments with no rate: they count nowhere until one is set' },
);

export const RateDeleted = Type.Object({ message: Type.String(), deleted: Type.Boolean() });
