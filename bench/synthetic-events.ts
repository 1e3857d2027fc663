import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Engine } from '../src/db/database.ts';
import { sqlitePathFromUrl } from '../src/db/database-url.ts';

// Synthetic traffic for one website, written with the fastest plain SQL each engine offers
// (one prepared statement in one transaction on SQLite, unnest() batches on PostgreSQL); the
// rollups are then built by the product's own rebuild (see timeseries.ts).
//
// Shape: `days` local days up to today; each day a few thousand visitor-days drawn from a pool
// of returning visitors (a skewed draw, so some come back often), 1-5 pageviews in one session
// each, a goal for 5 % of them; a payment for 1 % of them, a tenth of those renewals.

export interface SyntheticPlan {
  websiteId: string;
  events: number;
  days: number;
  now: number;
}

export interface SyntheticCounts {
  events: number;
  payments: number;
  visitorDays: number;
}

interface EventRow {
  id: string;
  visitorId: string;
  sessionId: string;
  type: string;
  name: string | null;
  path: string;
  occurredAt: string;
  place: Place;
  agent: Agent;
  referrerSource: string;
  utmCampaign: string | null;
}

interface Place {
  country: string;
  region: string;
  city: string;
}

interface Agent {
  browser: string;
  os: string;
  device: string;
}

// Each visitor has one place and one device (picked from their number), each session one source.
const PLACES: Place[] = [
  { country: 'US', region: 'California', city: 'San Francisco' },
  { country: 'US', region: 'New York', city: 'New York' },
  { country: 'US', region: 'Texas', city: 'Austin' },
  { country: 'DE', region: 'Berlin', city: 'Berlin' },
  { country: 'GB', region: 'England', city: 'London' },
  { country: 'FR', region: 'Ile-de-France', city: 'Paris' },
  { country: 'IN', region: 'Karnataka', city: 'Bengaluru' },
  { country: 'BR', region: 'Sao Paulo', city: 'Sao Paulo' },
  { country: 'JP', region: 'Tokyo', city: 'Tokyo' },
  { country: 'CA', region: 'Ontario', city: 'Toronto' },
];
const AGENTS: Agent[] = [
  { browser: 'Chrome', os: 'Windows', device: 'desktop' },
  { browser: 'Chrome', os: 'macOS', device: 'desktop' },
  { browser: 'Safari', os: 'iOS', device: 'mobile' },
  { browser: 'Chrome', os: 'Android', device: 'mobile' },
  { browser: 'Firefox', os: 'Linux', device: 'desktop' },
  { browser: 'Safari', os: 'iOS', device: 'tablet' },
  { browser: 'Microsoft Edge', os: 'Windows', device: 'desktop' },
];
const SOURCES = ['Direct/None', 'Direct/None', 'Google', 'Google', 'Google', 'Hacker News', 'Twitter', 'GitHub', 'news.example.org'];
const CAMPAIGNS = ['spring', 'launch', 'newsletter'];

interface PaymentRow {
  id: string;
  transactionId: string;
  amountMinor: number;
  visitorId: string;
  renewal: boolean;
  occurredAt: string;
}

const DAY_MS = 86_400_000;

/** A small deterministic generator, so every run loads the same data. */
export function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** Calls `emit` with batches of generated rows until `plan.events` events were produced. */
async function generate(plan: SyntheticPlan, batchSize: number, emit: (events: EventRow[], payments: PaymentRow[]) => Promise<void>) {
  const random = generator(20261121);
  const perDay = Math.ceil(plan.events / plan.days);
  const pool = Math.max(1000, Math.round(perDay / 3) * 6);
  const paths = ['/', '/pricing', '/blog', '/docs', '/signup', '/about'];
  const firstDay = plan.now - (plan.days - 1) * DAY_MS;
  let events: EventRow[] = [];
  let payments: PaymentRow[] = [];
  let written = 0;
  let sequence = 0;
  let visitorDays = 0;
  const nextId = (time: number) => hex(Math.floor(time / 1000), 8) + hex(sequence++, 16);

  for (let day = 0; day < plan.days && written < plan.events; day++) {
    const dayStart = Math.floor((firstDay + day * DAY_MS) / DAY_MS) * DAY_MS;
    let today = 0;
    while (today < perDay && written < plan.events) {
      const number = Math.floor(pool * random() ** 2);
      const visitor = `visitor-${hex(number, 8)}`;
      const session = `${visitor}-${day}`;
      const who = { place: PLACES[number % PLACES.length]!, agent: AGENTS[(number >> 3) % AGENTS.length]! };
      const from = { referrerSource: SOURCES[Math.floor(random() * SOURCES.length)]!, utmCampaign: random() < 0.1 ? CAMPAIGNS[Math.floor(random() * CAMPAIGNS.length)]! : null };
      let time = dayStart + Math.floor(random() * (DAY_MS - 3_600_000));
      if (time > plan.now) time = plan.now - Math.floor(random() * 3_600_000);
      const count = 1 + Math.floor(random() * 5);
      visitorDays += 1;
      for (let i = 0; i < count && written < plan.events; i++, written++, today++) {
        time += Math.floor(random() * 120_000);
        events.push({ id: nextId(time), visitorId: visitor, sessionId: session, type: 'pageview', name: null, path: paths[i % paths.length]!, occurredAt: new Date(time).toISOString(), ...who, ...from });
      }
      if (random() < 0.05 && written < plan.events) {
        events.push({ id: nextId(time), visitorId: visitor, sessionId: session, type: 'custom', name: 'signup', path: '/signup', occurredAt: new Date(time + 1000).toISOString(), ...who, ...from });
        written += 1;
        today += 1;
      }
      if (random() < 0.01) {
        const id = nextId(time);
        payments.push({ id, transactionId: `tx-${id}`, amountMinor: 900 + Math.floor(random() * 9000), visitorId: visitor, renewal: random() < 0.1, occurredAt: new Date(time + 2000).toISOString() });
      }
      if (events.length >= batchSize) {
        await emit(events, payments);
        events = [];
        payments = [];
      }
    }
  }
  await emit(events, payments);
  return { events: written, visitorDays };
}

async function loadSqlite(url: string, plan: SyntheticPlan): Promise<SyntheticCounts> {
  const path = sqlitePathFromUrl(url);
  if (!path) throw new Error(`not a SQLite URL: ${url}`);
  const db = new SQLite(path);
  db.pragma('busy_timeout = 5000');
  // Bench set-up only: a crash here loses nothing worth keeping, and a large cache keeps the
  // index pages of a million rows in memory.
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  let payments = 0;
  try {
    const insertEvent = db.prepare(
      `insert into events (id, website_id, type, name, visitor_id, session_id, hostname, path, referrer, country, browser, os, device, metadata, source, occurred_at,
         region, city, referrer_source, utm_campaign)
       values (?, ?, ?, ?, ?, ?, 'bench.example.com', ?, null, ?, ?, ?, ?, null, 'browser', ?, ?, ?, ?, ?)`,
    );
    const insertPayment = db.prepare(
      `insert into payments (id, website_id, transaction_id, amount_minor, currency, visitor_id, email, renewal, refunded, occurred_at, created_at)
       values (?, ?, ?, ?, 'USD', ?, null, ?, 0, ?, ?)`,
    );
    const write = db.transaction((events: EventRow[], rows: PaymentRow[]) => {
      for (const e of events) {
        insertEvent.run(e.id, plan.websiteId, e.type, e.name, e.visitorId, e.sessionId, e.path, e.place.country, e.agent.browser, e.agent.os, e.agent.device, e.occurredAt, e.place.region, e.place.city, e.referrerSource, e.utmCampaign);
      }
      for (const p of rows) insertPayment.run(p.id, plan.websiteId, p.transactionId, p.amountMinor, p.visitorId, p.renewal ? 1 : 0, p.occurredAt, p.occurredAt);
    });
    const counts = await generate(plan, 50_000, async (events, rows) => {
      write(events, rows);
      payments += rows.length;
    });
    return { ...counts, payments };
  } finally {
    db.close();
  }
}

async function loadPostgres(url: string, pgSchema: string, plan: SyntheticPlan): Promise<SyntheticCounts> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${pgSchema}` });
  await client.connect();
  let payments = 0;
  try {
    const counts = await generate(plan, 20_000, async (events, rows) => {
      if (events.length > 0) {
        await client.query(
          `insert into events (id, website_id, type, name, visitor_id, session_id, hostname, path, referrer, country, browser, os, device, metadata, source, occurred_at,
             region, city, referrer_source, utm_campaign)
           select id, $1, type, name, visitor_id, session_id, 'bench.example.com', path, null, country, browser, os, device, null, 'browser', occurred_at,
             region, city, referrer_source, utm_campaign
           from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[],
             $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
             as t(id, type, name, visitor_id, session_id, path, occurred_at, country, browser, os, device, region, city, referrer_source, utm_campaign)`,
          [
            plan.websiteId,
            events.map((e) => e.id),
            events.map((e) => e.type),
            events.map((e) => e.name),
            events.map((e) => e.visitorId),
            events.map((e) => e.sessionId),
            events.map((e) => e.path),
            events.map((e) => e.occurredAt),
            events.map((e) => e.place.country),
            events.map((e) => e.agent.browser),
            events.map((e) => e.agent.os),
            events.map((e) => e.agent.device),
            events.map((e) => e.place.region),
            events.map((e) => e.place.city),
            events.map((e) => e.referrerSource),
            events.map((e) => e.utmCampaign),
          ],
        );
      }
      if (rows.length > 0) {
        await client.query(
          `insert into payments (id, website_id, transaction_id, amount_minor, currency, visitor_id, email, renewal, refunded, occurred_at, created_at)
           select id, $1, transaction_id, amount_minor, 'USD', visitor_id, null, renewal, false, occurred_at, occurred_at
           from unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::boolean[], $7::timestamptz[])
             as t(id, transaction_id, amount_minor, visitor_id, renewal, occurred_at)`,
          [
            plan.websiteId,
            rows.map((p) => p.id),
            rows.map((p) => p.transactionId),
            rows.map((p) => p.amountMinor),
            rows.map((p) => p.visitorId),
            rows.map((p) => p.renewal),
            rows.map((p) => p.occurredAt),
          ],
        );
        payments += rows.length;
      }
    });
    await client.query('analyze events; analyze payments');
    return { ...counts, payments };
  } finally {
    await client.end();
  }
}

export function loadSyntheticEvents(engine: Engine, url: string, pgSchema: string | undefined, plan: SyntheticPlan): Promise<SyntheticCounts> {
  return engine === 'sqlite' ? loadSqlite(url, plan) : loadPostgres(url, pgSchema!, plan);
}
