import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, ErrorEnvelope, Message, ok, withErrors } from '../../http/schemas.ts';
import { sessionOf } from '../../http/request-context.ts';
import { SESSION_COOKIE } from '../../auth/sessions.ts';
import type { AccountAccess } from '../../plugins/route-access.ts';
import {
  ChangePasswordBody,
  DashboardSession,
  NewAccountBody,
  PasswordBody,
  SessionInfo,
  SessionParams,
  SetupState,
  SignInBody,
} from './dashboard.schemas.ts';
import { clearSessionCookie, setSessionCookie } from './session-cookie.ts';
import * as service from './sessions.service.ts';
import { signInThrottles } from './sign-in-throttle.ts';

const tags = ['Dashboard'];
/** A signed-in dashboard user (a session has the account's full rights; tokens are refused). */
export const SESSION_ONLY: AccountAccess = { scope: 'account', permission: 'websites:read', apiKey: false, sessionOnly: true };

export const sessionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;
  const throttle = signInThrottles(app);

  app.get('/setup', {
    config: { access: { public: true } },
    schema: { tags, summary: 'Whether the first-run setup is still to do, and whether sign-up is open', response: withErrors({ 200: Envelope(SetupState) }) },
    handler: async () => ok([{ setupRequired: await service.isSetupRequired(db), signUpOpen: app.config.signup === 'open' }]),
  });

  app.post('/setup', {
    config: { access: { public: true } },
    preHandler: [throttle.perAddress],
    schema: {
      tags,
      summary: 'First-run setup: create the first account and sign in (only while no account exists)',
      body: NewAccountBody,
      response: withErrors({ 200: Envelope(SessionInfo), 409: ErrorEnvelope }),
    },
    handler: async (request, reply) => {
      const started = await service.setUp(db, request.body, request.headers['user-agent']);
      setSessionCookie(app, reply, started.secret);
      return ok([started.info]);
    },
  });

  app.post('/sign-up', {
    config: { access: { public: true } },
    preHandler: [throttle.perAddress],
    schema: {
      tags,
      summary: 'Create an account and sign in (only when SIGNUP=open)',
      body: NewAccountBody,
      response: withErrors({ 200: Envelope(SessionInfo), 409: ErrorEnvelope }),
    },
    handler: async (request, reply) => {
      if (app.config.signup !== 'open') service.refuseSignUp();
      const started = await service.signUp(db, request.body, request.headers['user-agent']);
      setSessionCookie(app, reply, started.secret);
      return ok([started.info]);
    },
  });

  app.post('/sign-in', {
    config: { access: { public: true } },
    preHandler: [throttle.perAddress, throttle.perAccount],
    schema: {
      tags,
      summary: 'Sign in with e-mail and password; sets the session cookie (throttled per account and per address)',
      body: SignInBody,
      response: withErrors({ 200: Envelope(SessionInfo) }),
    },
    handler: async (request, reply) => {
      const started = await service.signIn(db, request.body, request.headers['user-agent']);
      setSessionCookie(app, reply, started.secret);
      return ok([started.info]);
    },
  });

  app.get('/session', {
    config: { access: { ...SESSION_ONLY, answersSignedOut: true } },
    schema: {
      tags,
      summary: 'The signed-in account and the CSRF token its writes send; an empty list when no one is signed in',
      description:
        'The dashboard asks this on its first page, so signed out is an answer, not an error: without a session ' +
        '(no cookie, or the cookie of a session that has ended, which is then cleared) `data` is `[]`. ' +
        'A token or key is still refused (403), and every other dashboard route still answers 401 without a session.',
      response: withErrors({ 200: Envelope(SessionInfo) }),
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      if (!request.principal) {
        if (request.cookies[SESSION_COOKIE] !== undefined) clearSessionCookie(app, reply);
        return ok([]);
      }
      return ok([await service.describeSession(db, sessionOf(request))]);
    },
  });

  app.post('/sign-out', {
    config: { access: SESSION_ONLY },
    schema: { tags, summary: 'End this session', body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request, reply) => {
      await service.signOut(db, sessionOf(request));
      clearSessionCookie(app, reply);
      return ok([{ message: 'Signed out' }]);
    },
  });

  app.post('/sign-out-everywhere', {
    config: { access: SESSION_ONLY },
    schema: { tags, summary: 'End every session of the account, this one included', body: EmptyBody, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request, reply) => {
      await service.signOutEverywhere(db, sessionOf(request));
      clearSessionCookie(app, reply);
      return ok([{ message: 'Signed out everywhere' }]);
    },
  });

  app.get('/sessions', {
    config: { access: SESSION_ONLY },
    schema: { tags, summary: "The account's active sessions", response: withErrors({ 200: Envelope(DashboardSession) }) },
    handler: async (request) => ok(await service.listSessions(db, sessionOf(request))),
  });

  app.delete('/sessions/:sessionId', {
    config: { access: SESSION_ONLY },
    schema: { tags, summary: 'End one session', params: SessionParams, response: withErrors({ 200: Envelope(Message) }) },
    handler: async (request, reply) => {
      if (await service.revokeSession(db, sessionOf(request), request.params.sessionId)) clearSessionCookie(app, reply);
      return ok([{ message: 'Session ended' }]);
    },
  });

  app.put('/password', {
    config: { access: SESSION_ONLY },
    schema: {
      tags,
      summary: 'Change the password; every other session ends',
      body: ChangePasswordBody,
      response: withErrors({ 200: Envelope(Message) }),
    },
    handler: async (request) => {
      await service.changePassword(db, sessionOf(request), request.body);
      return ok([{ message: 'Password changed; your other sessions have ended' }]);
    },
  });

  app.post('/reauthenticate', {
    config: { access: SESSION_ONLY },
    preHandler: [throttle.perAddress],
    schema: {
      tags,
      summary: 'Enter the password again, for what needs a recent sign-in (deleting a website)',
      body: PasswordBody,
      response: withErrors({ 200: Envelope(SessionInfo) }),
    },
    handler: async (request) => ok([await service.reauthenticate(db, sessionOf(request), request.body.password)]),
  });
};
