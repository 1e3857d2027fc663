import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { verifyPassword } from '../../auth/passwords.ts';
import { unauthorized } from '../../errors.ts';
import { Envelope, ok, withErrors } from '../../http/schemas.ts';
import { BREAKDOWNS } from '../analytics/breakdowns.ts';
import { DERIVED_DATA_HEADER } from '../analytics/day-relocation.ts';
import { Funnel } from '../funnels/funnels.schemas.ts';
import { listFunnels } from '../funnels/funnels.service.ts';
import { GoalCustomization, PaletteColor } from '../goals/goals.schemas.ts';
import { goalPalette, listGoalCustomizations } from '../goals/goals.service.ts';
import { IGNORED_PARAMS_HEADER, SAMPLE_RATE_HEADER } from '../stats/stats.params.ts';
import * as stats from '../stats/stats.schemas.ts';
import * as statsService from '../stats/stats.service.ts';
import { Timeseries, TimeseriesQuery } from '../stats/timeseries.schemas.ts';
import * as series from '../stats/timeseries.service.ts';
import { isUnlocked, openLinkOf, requireSharedLink, setUnlockCookie, sharedLinkOf, unlockThrottles } from './share-access.ts';
import { ShareState, SlugFunnelParams, SlugParams, UnlockBody, Unlocked } from './share.schemas.ts';

// The read-only API of a shared dashboard (/share/<slug>), for its page: the website API's reads
// that the analytics page makes, answered by the same services, for the link's website only. Left
// out on purpose: the visitor list and profiles, the live map (names and e-mails of identified
// visitors), notes, settings and every write. The page's own API, like the page itself: out of
// the OpenAPI document, which describes the API that scripts and agents call with a credential.

const tags = ['Shared dashboard'];
const S = '/api/v1/share/:slug';
const open = { access: { public: true as const } };

function answer<T>(reply: FastifyReply, result: { body: T; ignored: string[]; rebuilding?: boolean; sampleRate?: number }): T {
  if (result.ignored.length > 0) reply.header(IGNORED_PARAMS_HEADER, result.ignored.join(', '));
  if (result.sampleRate !== undefined) reply.header(SAMPLE_RATE_HEADER, String(result.sampleRate));
  if (result.rebuilding) reply.header(DERIVED_DATA_HEADER, 'rebuilding');
  return result.body;
}

export const shareRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db.reads, store: app.eventStore, publicUrl: app.config.publicUrl };

  app.get(S, {
    config: open,
    schema: { hide: true, tags, summary: 'Whether the shared dashboard exists and needs its password', params: SlugParams, response: withErrors({ 200: Envelope(ShareState) }) },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store').header('x-robots-tag', 'noindex');
      const link = await openLinkOf(app, request.params.slug);
      return ok([{ linkName: link.name, passwordRequired: link.passwordHash !== null, unlocked: isUnlocked(app, request, link) }]);
    },
  });

  app.post(`${S}/unlock`, {
    config: open,
    preHandler: unlockThrottles(app),
    schema: {
      hide: true,
      tags,
      summary: "Enter a shared dashboard's password; sets a cookie for this link that lasts a day",
      params: SlugParams,
      body: UnlockBody,
      response: withErrors({ 200: Envelope(Unlocked) }),
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const link = await openLinkOf(app, request.params.slug);
      if (link.passwordHash === null) return ok([{ unlocked: true as const }]);
      if (!(await verifyPassword(request.body.password, link.passwordHash))) throw unauthorized('Wrong password for this shared dashboard');
      setUnlockCookie(app, reply, request.params.slug, link);
      return ok([{ unlocked: true as const }]);
    },
  });

  await app.register(async (scope) => {
    const data = scope.withTypeProvider<TypeBoxTypeProvider>();
    data.addHook('onRequest', requireSharedLink(app));
    const site = (request: Parameters<typeof sharedLinkOf>[0]) => sharedLinkOf(request).websiteId;

    data.get(`${S}/analytics/metadata`, {
      config: open,
      schema: { hide: true, tags, summary: "The shared website's name, time zone, currency and KPI", params: SlugParams, querystring: stats.MetadataQuery, response: withErrors({ 200: stats.Metadata }) },
      handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => statsService.metadata(deps, site(request), request.query))),
    });

    data.get(`${S}/analytics/overview`, {
      config: open,
      schema: { hide: true, tags, summary: 'The overview numbers of the shared website', params: SlugParams, querystring: stats.OverviewQuery, response: withErrors({ 200: stats.Overview }) },
      handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => statsService.overview(deps, site(request), request.query))),
    });

    data.get(`${S}/analytics/timeseries`, {
      config: open,
      schema: { hide: true, tags, summary: 'The time series of the shared website', params: SlugParams, querystring: TimeseriesQuery, response: withErrors({ 200: Timeseries }) },
      handler: async (request, reply) => {
        const ignored = series.ignoredSeriesParams(request.query);
        if (ignored.length > 0) reply.header(IGNORED_PARAMS_HEADER, ignored.join(', '));
        const notes: series.SeriesNotes = { rebuilding: false };
        const now = new Date(); // its arrival, as the website API's series
        const view = await app.analyticsRead(reply, () => series.timeseries(deps, site(request), request.query, now, notes));
        if (notes.rebuilding) reply.header(DERIVED_DATA_HEADER, 'rebuilding');
        if (notes.sampleRate !== undefined) reply.header(SAMPLE_RATE_HEADER, String(notes.sampleRate));
        return view;
      },
    });

    for (const kind of BREAKDOWNS) {
      data.get(`${S}/analytics/${kind}`, {
        config: open,
        schema: { hide: true, tags, summary: `The shared website's ${kind.replace(/-/g, ' ')}`, params: SlugParams, querystring: stats.BreakdownQuery, response: withErrors({ 200: stats.BreakdownAnswers[kind] }) },
        handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => statsService.breakdown(deps, kind, site(request), request.query))),
      });
    }

    data.get(`${S}/analytics/goals/properties`, {
      config: open,
      schema: { hide: true, tags, summary: "A custom goal's property values on the shared website", params: SlugParams, querystring: stats.PropertiesQuery, response: withErrors({ 200: stats.Properties }) },
      handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => statsService.goalProperties(deps, site(request), request.query))),
    });

    data.get(`${S}/analytics/realtime`, {
      config: open,
      schema: { hide: true, tags, summary: 'How many visitors the shared website has now', params: SlugParams, querystring: stats.PlainQuery, response: withErrors({ 200: stats.Realtime }) },
      handler: async (request, reply) => answer(reply, await app.analyticsRead(reply, () => statsService.realtime(deps, site(request), request.query))),
    });

    data.get(`${S}/analytics/funnels/:funnelId`, {
      config: open,
      schema: { hide: true, tags, summary: 'A funnel report of the shared website', params: SlugFunnelParams, querystring: stats.FunnelQuery, response: withErrors({ 200: stats.FunnelReport }) },
      handler: async (request, reply) =>
        answer(reply, await app.analyticsRead(reply, () => statsService.funnelReport(deps, site(request), request.params.funnelId, request.query))),
    });

    data.get(`${S}/funnels`, {
      config: open,
      schema: { hide: true, tags, summary: "The shared website's active funnels", params: SlugParams, response: withErrors({ 200: Envelope(Funnel) }) },
      handler: async (request) => ok(await listFunnels(app.db.kysely, site(request))),
    });

    data.get(`${S}/goals/customizations`, {
      config: open,
      schema: {
        hide: true,
        tags,
        summary: "The shared website's goal display names and colors",
        params: SlugParams,
        response: withErrors({ 200: Envelope(GoalCustomization, { colors: Type.Array(PaletteColor) }) }),
      },
      handler: async (request) => ({ ...ok(await listGoalCustomizations(app.db.kysely, site(request))), colors: goalPalette() }),
    });
  });
};
