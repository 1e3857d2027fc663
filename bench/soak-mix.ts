import type { IncomingHttpHeaders } from 'node:http';
import { browserEvent } from './browser-event.ts';
import type { Audience } from './soak-traffic.ts';
import { last30Days } from './website-api.ts';

// The soak's mix: every operation, its share of the requests (WEIGHTS, per 100) and how it is
// made. Page views and goals go through POST /api/events as the datafast web SDK sends them, from
// the visitors' public addresses in X-Forwarded-For (the server trusts the proxy header, so GeoIP
// looks each one up); server-side goals and payments, and the website API's reads, use the
// website's df_ key; the admin reads and writes use the account token.

export type Group = 'ingestion' | 'server-side' | 'admin read' | 'admin write' | 'website read';

export interface Answer {
  status: number;
  body: Buffer;
  headers: IncomingHttpHeaders;
}

export interface SoakRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Keep the answer's body for settle (otherwise it is read and dropped). */
  readBody?: boolean;
  /** Told the answer (null: none came, a connection error or a timeout); returns a failure its status hides. */
  settle?(answer: Answer | null): string | void;
}

export interface SoakContext {
  website: { id: string; trackingId: string; domain: string; timezone: string };
  token: string;
  apiKey: string;
  audience: Audience;
  notes: Handoff<string>;
  goalStyles: Handoff<string>;
  sequence: number;
}

export interface Operation {
  name: string;
  group: Group;
  /** The route as a template, for the tables. */
  route: string;
  /** Requests per 100 of the mix. */
  weight: number;
  /** The request to send; null when there is nothing to send (the create it undoes failed). */
  prepare(context: SoakContext): SoakRequest | null | Promise<SoakRequest | null>;
}

/**
 * A write whose undo comes later in the mix (a note created, then deleted): the create offers the
 * promise of its id, the undo takes the oldest one (waiting for it if the create has not been
 * sent yet). Its latency counts from its own scheduled time, so a slow create shows in it too.
 */
export class Handoff<T> {
  private readonly offered: Promise<T | null>[] = [];
  private readonly waiting: ((value: Promise<T | null>) => void)[] = [];

  offer(value: Promise<T | null>): void {
    const taker = this.waiting.shift();
    if (taker) taker(value);
    else this.offered.push(value);
  }

  take(): Promise<T | null> {
    const value = this.offered.shift();
    return value ?? new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Answers every undo still waiting with null (the run is over). */
  close(): void {
    for (const taker of this.waiting.splice(0)) taker(Promise.resolve(null));
  }
}

const json = { 'content-type': 'application/json' };
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const admin = (context: SoakContext) => `/api/v1/admin/websites/${context.website.id}`;
const dataId = (body: Buffer) => (JSON.parse(body.toString()) as { data: { id: string }[] }).data[0]!.id;

/** A page view or a goal of the audience, from the visitor's own address and browser. */
function browserRequest(context: SoakContext, goal: boolean): SoakRequest {
  const { audience, website } = context;
  const view = goal ? null : audience.nextPageview();
  const session = view ? view.session : audience.activeSession();
  const { visitor } = session;
  const visit = {
    visitorId: visitor.id,
    sessionId: session.id,
    visitorFirstSeenAt: visitor.firstSeenAt,
    visitorSessionNumber: session.number,
    href: view ? view.href : (session.lastHref ?? `https://${website.domain}/`),
    referrer: view ? view.referrer : session.source,
    userAgent: visitor.userAgent,
  };
  return {
    method: 'POST',
    path: '/api/events',
    headers: { ...json, 'user-agent': visitor.userAgent, 'x-forwarded-for': visitor.address },
    body: browserEvent(website, visit, goal ? { eventName: audience.goalName(), plan: 'pro' } : undefined),
    // Ingestion answers 200 for an event it drops too, naming the reason in a header.
    settle(answer) {
      const dropped = answer?.headers['x-sightline-dropped'];
      if (dropped !== undefined) return `dropped: ${dropped}`;
      if (answer?.status === 200 && !goal) visitor.stored = true;
    },
  };
}

function read(name: string, route: string, weight: number, query: (context: SoakContext) => string): Operation {
  return {
    name,
    group: 'website read',
    route,
    weight,
    prepare(context) {
      const params = query(context);
      return { method: 'GET', path: params ? `${route.split('?')[0]}?${params}` : route, headers: bearer(context.apiKey) };
    },
  };
}

function adminRead(name: string, route: string, weight: number, path: (context: SoakContext) => string): Operation {
  return { name, group: 'admin read', route, weight, prepare: (context) => ({ method: 'GET', path: path(context), headers: bearer(context.token) }) };
}

const SERIES_FIELDS = 'fields=visitors,sessions,pageviews,revenue,payments,conversion_rate';
const HOUR_MS = 3_600_000;

export const MIX: Operation[] = [
  { name: 'page view', group: 'ingestion', route: 'POST /api/events', weight: 60, prepare: (context) => browserRequest(context, false) },
  { name: 'goal (browser)', group: 'ingestion', route: 'POST /api/events', weight: 5, prepare: (context) => browserRequest(context, true) },
  {
    name: 'goal (server)',
    group: 'server-side',
    route: 'POST /api/v1/goals',
    weight: 4,
    prepare(context) {
      const session = context.audience.activeSession();
      const body = { datafast_visitor_id: session.visitor.id, name: context.audience.goalName(), metadata: { plan: 'pro', source: 'backend' } };
      return { method: 'POST', path: '/api/v1/goals', headers: { ...json, ...bearer(context.apiKey) }, body: JSON.stringify(body) };
    },
  },
  {
    name: 'payment',
    group: 'server-side',
    route: 'POST /api/v1/payments',
    weight: 2,
    prepare(context) {
      const session = context.audience.activeSession();
      const body = {
        amount: context.audience.amount(),
        currency: 'USD',
        transaction_id: `soak-tx-${context.sequence++}-${session.visitor.id}`,
        datafast_visitor_id: session.visitor.id,
        email: `${session.visitor.id}@customers.example.com`,
        renewal: context.sequence % 10 === 0,
      };
      return { method: 'POST', path: '/api/v1/payments', headers: { ...json, ...bearer(context.apiKey) }, body: JSON.stringify(body) };
    },
  },
  adminRead('websites', 'GET /api/v1/admin/websites', 3, () => '/api/v1/admin/websites'),
  adminRead('tokens', 'GET /api/v1/admin/access-tokens', 2, () => '/api/v1/admin/access-tokens'),
  adminRead('api keys', 'GET /api/v1/admin/websites/{id}/apikeys', 2, (context) => `${admin(context)}/apikeys`),
  adminRead('goals', 'GET /api/v1/admin/websites/{id}/goals', 2, (context) => `${admin(context)}/goals`),
  {
    name: 'website update',
    group: 'admin write',
    route: 'PUT /api/v1/admin/websites/{id}',
    weight: 1,
    prepare(context) {
      const turn = context.sequence++;
      const body = { name: `Soak ${turn % 7}`, excludedPaths: turn % 2 === 0 ? ['/admin/*'] : null };
      return { method: 'PUT', path: admin(context), headers: { ...json, ...bearer(context.token) }, body: JSON.stringify(body) };
    },
  },
  {
    name: 'note create',
    group: 'admin write',
    route: 'POST /api/v1/admin/websites/{id}/notes',
    weight: 1,
    prepare(context) {
      const body = { text: `Soak note ${context.sequence++}`, timestamp: new Date().toISOString() };
      let settle!: (answer: Answer | null) => void;
      context.notes.offer(new Promise((resolve) => (settle = (answer) => resolve(answer?.status === 200 ? dataId(answer.body) : null))));
      return { method: 'POST', path: `${admin(context)}/notes`, headers: { ...json, ...bearer(context.token) }, body: JSON.stringify(body), readBody: true, settle };
    },
  },
  {
    name: 'note delete',
    group: 'admin write',
    route: 'DELETE /api/v1/admin/websites/{id}/notes/{noteId}',
    weight: 1,
    async prepare(context) {
      const id = await context.notes.take();
      return id === null ? null : { method: 'DELETE', path: `${admin(context)}/notes/${id}`, headers: bearer(context.token) };
    },
  },
  {
    name: 'goal style set',
    group: 'admin write',
    route: 'PATCH /api/v1/admin/websites/{id}/goals/customizations',
    weight: 1,
    prepare(context) {
      const goalName = context.audience.goalName();
      const body = { goalName, displayName: `Soak ${goalName}`, description: 'set by the soak' };
      let settle!: (answer: Answer | null) => void;
      context.goalStyles.offer(new Promise((resolve) => (settle = (answer) => resolve(answer?.status === 200 ? goalName : null))));
      return { method: 'PATCH', path: `${admin(context)}/goals/customizations`, headers: { ...json, ...bearer(context.token) }, body: JSON.stringify(body), settle };
    },
  },
  {
    name: 'goal style reset',
    group: 'admin write',
    route: 'DELETE /api/v1/admin/websites/{id}/goals/customizations',
    weight: 1,
    async prepare(context) {
      const goalName = await context.goalStyles.take();
      return goalName === null ? null : { method: 'DELETE', path: `${admin(context)}/goals/customizations?goalName=${goalName}`, headers: bearer(context.token) };
    },
  },
  read('overview', '/api/v1/analytics/overview', 3, () => ''),
  read('pages', '/api/v1/analytics/pages', 2, () => ''),
  read('referrers', '/api/v1/analytics/referrers', 2, () => ''),
  read('series daily 30 d', '/api/v1/analytics/timeseries?interval=day', 3, (context) => `${SERIES_FIELDS}&interval=day&${last30Days(context.website.timezone)}`),
  read('series hourly 24 h', '/api/v1/analytics/timeseries?interval=hour', 2, () => {
    const now = Date.now();
    return `${SERIES_FIELDS}&interval=hour&startAt=${new Date(now - 24 * HOUR_MS).toISOString()}&endAt=${new Date(now).toISOString()}`;
  }),
  read('realtime', '/api/v1/analytics/realtime', 3, () => ''),
];
