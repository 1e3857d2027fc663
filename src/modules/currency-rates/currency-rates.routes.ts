import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyBody, Envelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { Rate, RateBody, RateDeleted, RateParams, Unconverted } from './currency-rates.schemas.ts';
import * as service from './currency-rates.service.ts';

// Not in admin-api.md (issue 35 item 3): payments in another currency than the website's counted
// 0 with no word; the owner sets a rate per currency and sees which currencies still count nothing.

const tags = ['Currency rates'];
const read = { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } as const;
const write = { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } as const;
const base = '/websites/:websiteId/currency-rates';

export const currencyRatesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get(base, {
    config: { access: read },
    schema: {
      tags,
      summary: "The exchange rates into the website's currency, and the currencies of payments that have none (they count nowhere)",
      params: WebsiteParams,
      response: withErrors({
        200: Envelope(Rate, { currency: Type.String({ description: "the website's currency" }), unconverted: Type.Array(Unconverted) }),
      }),
    },
    handler: async (request) => {
      const { data, currency, unconverted } = await service.listRates(db, websiteOf(request).websiteId);
      return { ...ok(data), currency, unconverted };
    },
  });

  app.put(`${base}/:currency`, {
    config: { access: write },
    schema: {
      tags,
      summary: "Set the rate of a currency: its payments count in every report, past ones included, at `rate` units of the website's currency each",
      params: RateParams,
      body: RateBody,
      response: withErrors({ 200: Envelope(Rate) }),
    },
    handler: async (request) => ok([await service.setRate(db, websiteOf(request).websiteId, request.params.currency, request.body.rate)]),
  });

  app.delete(`${base}/:currency`, {
    config: { access: write },
    schema: {
      tags,
      summary: 'Delete the rate of a currency (idempotent): its payments count nowhere again',
      params: RateParams,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(RateDeleted) }),
    },
    handler: async (request) => ok([await service.deleteRate(db, websiteOf(request).websiteId, request.params.currency)]),
  });
};
