import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, ok, withErrors } from '../../http/schemas.ts';
import { principalOf, accountCallerOf } from '../../http/request-context.ts';
import { Account, UpdateAccountBody } from './account.schemas.ts';
import * as service from './account.service.ts';

const tags = ['Account'];

export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;
  const limits = app.config.limits;

  app.get('/account', {
    config: { access: { scope: 'account', permission: 'analytics:read', apiKey: true } },
    schema: { tags, summary: 'The current account: profile and plan', response: withErrors({ 200: Envelope(Account) }) },
    handler: async (request) => ok([await service.getAccount(db, limits, principalOf(request))]),
  });

  app.put('/account', {
    config: { access: { scope: 'account', permission: 'analytics:read', apiKey: false } },
    schema: { tags, summary: "Update the account's name", body: UpdateAccountBody, response: withErrors({ 200: Envelope(Account) }) },
    handler: async (request) => ok([await service.renameAccount(db, limits, accountCallerOf(request).accountId, request.body.name)]),
  });
};
