import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, Message, ok, withErrors } from '../../http/schemas.ts';
import { accountCallerOf } from '../../http/request-context.ts';
import { AccessToken, CreateAccessTokenBody, CreatedAccessToken, TokenParams } from './access-tokens.schemas.ts';
import * as service from './access-tokens.service.ts';

const tags = ['Account tokens'];

export const accessTokensRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;

  app.get('/access-tokens', {
    config: { access: { scope: 'account', permission: 'api-keys:read', apiKey: false } },
    schema: { tags, summary: "List the account's tokens (masked)", response: withErrors({ 200: Envelope(AccessToken) }) },
    handler: async (request) => ok(await service.listAccessTokens(db, accountCallerOf(request).accountId)),
  });

  app.post('/access-tokens', {
    config: { access: { scope: 'account', permission: 'api-keys:write', apiKey: false } },
    schema: {
      tags,
      summary: 'Create a token; the raw dft_ value is returned in this response only',
      body: CreateAccessTokenBody,
      response: withErrors({ 200: Envelope(CreatedAccessToken) }),
    },
    handler: async (request) =>
      ok([await service.createAccessToken(db, accountCallerOf(request), app.config.limits.tokensPerAccount, request.body)]),
  });

  app.delete('/access-tokens/:tokenId', {
    config: { access: { scope: 'account', permission: 'api-keys:write', apiKey: false } },
    schema: { tags, summary: 'Revoke a token', params: TokenParams, body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request) => ok([await service.revokeAccessToken(db, accountCallerOf(request), request.params.tokenId)]),
  });
};
