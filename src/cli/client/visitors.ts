import type { Command } from 'commander';
import { action, call, connect } from './api.ts';
import { type ReportOptions, count, reportQuery, sayPage, withFilters, withPaging, withRange, withWebsiteRef } from './breakdowns.ts';
import { emit, printRecord, printTable, say, withJson } from './output.ts';

// Who visits: `sightline visitors list|get` (the website API's visitors), and who is on the
// website now (`sightline analytics realtime|realtime-map`, registered on the analytics group).

interface ListOptions extends ReportOptions {
  completedGoal?: string;
  visitedPage?: string;
  visitedPageContains?: string;
  isCustomer?: boolean;
}

/** A place's parts that are known, e.g. "San Jose, California, US". */
function place(...parts: Array<string | null | undefined>): string | null {
  return parts.filter(Boolean).join(', ') || null;
}

const pathOf = (url: string | null) => {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
};

const withVersion = (part: { name: string | null; version?: string | null }) => (part.name ? [part.name, part.version].filter(Boolean).join(' ') : null);

const keyValues = (record: Record<string, string> | null | undefined) =>
  Object.entries(record ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(' ') || null;

export function registerVisitorCommands(program: Command): void {
  const visitors = program
    .command('visitors')
    .description("a website's visitors: who they are, where from, what they viewed and completed")
    .addHelpText(
      'after',
      `
Examples:
  $ sightline visitors list -w example.com --start-at 2026-03-01 --end-at 2026-03-31
  $ sightline visitors list -w example.com --completed-goal signup --filter country=US --limit 20
  $ sightline visitors list -w example.com --visited-page '/blog/*' --json | jq -r '.data[].visitorId'
  $ sightline visitors list -w example.com --visited-page-contains /docs --is-customer
  $ sightline visitors get -w example.com 3f1c2e9b-1d4a-4b00-9a12-345678abcdef`,
    );

  withJson(
    withPaging(
      withFilters(
        withRange(withWebsiteRef(visitors.command('list').description("the website's visitors, newest activity first")))
          .option('--completed-goal <goal>', 'only visitors who completed this goal')
          .option('--visited-page <paths>', 'only visitors who viewed one of these pages (comma-separated; * is a wildcard)')
          .option('--visited-page-contains <text>', 'only visitors who viewed a page whose path contains this')
          .option('--is-customer', 'only visitors with a payment (not with --completed-goal)')
          .option('--no-is-customer', 'only visitors without a payment'),
      ),
      'visitors',
    ),
    '{"data": [{visitorId, lastSeenAt, currentUrl, identity, acquisition}], "pagination": {limit, offset, total, hasMore}}',
  ).action(
    action(async (options: ListOptions) => {
      const connection = connect();
      const query = {
        ...(await reportQuery(connection, options)),
        ...(options.completedGoal !== undefined ? { completedGoal: options.completedGoal } : {}),
        ...(options.visitedPage !== undefined ? { visitedPage: options.visitedPage } : {}),
        ...(options.visitedPageContains !== undefined ? { visitedPageContains: options.visitedPageContains } : {}),
        ...(options.isCustomer !== undefined ? { isCustomer: options.isCustomer } : {}),
      };
      const body = await call(connection.client.GET('/api/v1/visitors', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => {
        printTable(
          body.data,
          [
            { header: 'visitor id', value: (v) => v.visitorId },
            // Four columns, so a UUID visitor id stays whole in 80 (device and browser: visitors get).
            { header: 'country', value: (v) => v.identity.country },
            { header: 'source', value: (v) => v.acquisition.referrer },
            { header: 'last seen', value: (v) => v.lastSeenAt },
          ],
          'No visitors.',
        );
        sayPage('Visitors', body.data.length, body.pagination);
      });
    }),
  );

  withJson(
    withWebsiteRef(visitors.command('get').description('one visitor: place, device, activity, goals and profile').argument('<visitorId>', "the visitor's id")),
    '{visitorId, identity, activity, profile, prediction}',
  ).action(
    action(async (visitorId: string, options: ReportOptions) => {
      const connection = connect();
      const query = await reportQuery(connection, options);
      const body = await call(
        connection.client.GET('/api/v1/visitors/{visitorId}', { params: { path: { visitorId }, query } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        const { identity, activity, profile } = body.data;
        const viewport = identity.viewport.width && identity.viewport.height ? `${identity.viewport.width}x${identity.viewport.height}` : null;
        printRecord([
          ['Visitor', body.data.visitorId],
          ['Place', place(identity.city, identity.region, identity.country)],
          ['Device', identity.device.type],
          ['Browser', withVersion(identity.browser)],
          ['OS', withVersion(identity.os)],
          ['Viewport', viewport],
          ['Params', keyValues(identity.params)],
          ['Visits', activity.visitCount],
          ['Pageviews', activity.pageViewCount],
          ['First visit', activity.firstVisitAt],
          ['Last visit', activity.lastVisitAt],
          ['Current URL', activity.currentUrl],
          ['Goals', activity.completedGoals.map((goal) => goal.name)],
          ['Profile', profile ? [profile.userId, profile.name].filter(Boolean).join(' ') : null],
          ['Profile data', keyValues(profile?.metadata)],
        ]);
        if (activity.visitedPages.length > 0) {
          process.stdout.write('\n');
          printTable(
            activity.visitedPages,
            [
              { header: 'viewed', value: (page) => page.timestamp },
              { header: 'page', value: (page) => page.url },
            ],
            '',
          );
        }
      });
    }),
  );
}

/** `sightline analytics realtime` and `realtime-map`. */
export function registerRealtimeCommands(analytics: Command): void {
  withJson(withWebsiteRef(analytics.command('realtime').description('visitors with an event in the last 5 minutes')), '[{visitors}]').action(
    action(async (options: ReportOptions) => {
      const connection = connect();
      const query = await reportQuery(connection, options);
      const body = await call(connection.client.GET('/api/v1/analytics/realtime', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => printRecord([['Visitors (last 5 minutes)', body.data[0]?.visitors ?? 0]]));
    }),
  );

  withJson(
    withWebsiteRef(analytics.command('realtime-map').description('who is on the website (last 10 minutes): place, device and page')),
    '{count, visitors, recentEvents, recentPayments}',
  ).action(
    action(async (options: ReportOptions) => {
      const connection = connect();
      const query = await reportQuery(connection, options);
      const body = await call(connection.client.GET('/api/v1/analytics/realtime/map', { params: { query } }), connection.settings.baseUrl);
      emit(options, body, () => {
        const map = body.data;
        printTable(
          map.visitors,
          [
            { header: 'visitor id', value: (v) => v.visitorId },
            { header: 'place', value: (v) => place(v.location.city, v.location.countryCode) },
            { header: 'device', value: (v) => v.system.device.type },
            { header: 'browser', value: (v) => v.system.browser.name },
            { header: 'page', value: (v) => pathOf(v.currentUrl) },
            { header: 'visits', value: (v) => v.visitCount },
          ],
          'Nobody in the last 10 minutes.',
        );
        say(`${count(map.count, 'visitor')} in the last 10 minutes; ${count(map.recentEvents.length, 'recent event')} and ${count(map.recentPayments.length, 'recent payment')} (--json lists them).`);
      });
    }),
  );
}
