import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, Message, ok, withErrors } from '../../http/schemas.ts';
import { linkMailSettings } from './dashboard-mail.ts';
import { ConfirmPasswordResetBody, PasswordResetBody } from './dashboard.schemas.ts';
import * as service from './password-reset.service.ts';
import { signInThrottles } from './sign-in-throttle.ts';

const tags = ['Dashboard'];

export const passwordResetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;
  const throttle = signInThrottles(app);

  app.post('/password-reset', {
    config: { access: { public: true } },
    preHandler: [throttle.perAddress, throttle.perAccount],
    schema: {
      tags,
      summary: 'Mail a link to set a new password (the same answer whether or not an account has the address; throttled)',
      body: PasswordResetBody,
      response: withErrors({ 200: Envelope(Message) }),
    },
    handler: async (request) => {
      await service.requestPasswordReset(db, request.body, linkMailSettings(app), app.background, () => app.mailOutbox?.poke());
      return ok([{ message: service.RESET_REQUESTED }]);
    },
  });

  app.post('/password-reset/confirm', {
    config: { access: { public: true } },
    preHandler: [throttle.perAddress],
    schema: {
      tags,
      summary: "Set a new password with a mailed reset link's token; every session of the account ends",
      body: ConfirmPasswordResetBody,
      response: withErrors({ 200: Envelope(Message) }),
    },
    handler: async (request) => {
      await service.confirmPasswordReset(db, request.body);
      return ok([{ message: 'Password changed; every session of the account has ended: sign in with the new password' }]);
    },
  });
};
