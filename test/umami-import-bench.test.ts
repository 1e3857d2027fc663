import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';
import { type UmamiDatabase, createUmamiDatabase, insertWebsite } from './helpers/umami-fixture.ts';

// A measurement, not a check (skipped unless SIGHTLINE_BENCH_UMAMI=1): an Umami website of
// BENCH_EVENTS page views and custom events (default 200,000; 20,000 sessions, 20,000 events a
// day) imported by the job, with its time and the event loop's delay meanwhile. Run:
//   SIGHTLINE_BENCH_UMAMI=1 [BENCH_EVENTS=1000000] [BENCH_ENGINE=postgres] npx vitest run test/umami-import-bench.test.ts

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);

describe.skipIf(!process.env.SIGHTLINE_BENCH_UMAMI)('the Umami import, measured', () => {
  const t = useTestApp((process.env.BENCH_ENGINE as 'sqlite') ?? 'sqlite', { imports: { jobs: true, maxUploadBytes: 1024, chunkRows: 500, umamiHosts: ['127.0.0.1'], umamiChunkDays: 7 } });
  let umami: UmamiDatabase;
  beforeAll(async () => { umami = await createUmamiDatabase(); });
  afterAll(async () => { await umami?.drop(); });

  it('imports a larger Umami website', { timeout: 600_000 }, async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const id = await insertWebsite(umami.client, 'Big', website.domain);
    const started = Date.now();
    await umami.client.query(`insert into session (session_id, website_id, browser, os, device, country, region, created_at)
      select md5('s' || i)::uuid, $1, (array['chrome','firefox','ios','crios','edge-chromium'])[1 + i % 5], (array['Windows 10','Mac OS','iOS','Linux','Android OS'])[1 + i % 5],
        (array['desktop','laptop','mobile','tablet'])[1 + i % 4], (array['DE','FR','US','GB','IT'])[1 + i % 5], (array['DE-BE','FR-IDF','US-CA','GB-ENG','IT-RM'])[1 + i % 5], now()
      from generate_series(0, 19999) i`, [id]);
    await umami.client.query(`insert into website_event (event_id, website_id, session_id, visit_id, created_at, url_path, referrer_domain, utm_source, event_type, event_name, hostname)
      select gen_random_uuid(), $1, md5('s' || (i % 20000))::uuid, md5('v' || (i % 20000) || '-' || (i / 20000 % 40))::uuid,
        timestamptz '2025-01-01 00:00:00+00' + ((i / 20000 % 40) * interval '1 day') + ((i % 20000) * interval '4 seconds') + ((i / 800000) * interval '1 minute'),
        '/page-' || (i % 60), (array[null, 'www.google.com', 't.co', 'news.ycombinator.com', 'example.org'])[1 + i % 5], (array[null, 'newsletter'])[1 + i % 2],
        case when i % 10 = 0 then 2 else 1 end, case when i % 10 = 0 then 'Signup' else null end, $2
      from generate_series(0, ${EVENTS - 1}) i`, [id, website.domain]);
    console.log(`fixture: ${EVENTS} events in ${Date.now() - started} ms`);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const t0 = Date.now();
    const created = await t.request('POST', `/api/v1/admin/websites/${website.id}/imports/umami`, { token: owner.token, body: { databaseUrl: umami.url, umamiWebsiteId: id } });
    const createdMs = Date.now() - t0;
    expect(created.status, created.raw).toBe(202);
    delay.enable();
    const t1 = Date.now();
    t.app.importJobs!.wake();
    await t.app.importJobs!.idle();
    const jobMs = Date.now() - t1;
    delay.disable();
    const done = (await t.request('GET', `/api/v1/admin/websites/${website.id}/imports/${created.body.data[0].id}`, { token: owner.token })).body.data[0];
    console.log(JSON.stringify({ engine: process.env.BENCH_ENGINE ?? 'sqlite', events: EVENTS, createMs: createdMs, jobMs, status: done.status, days: done.progress.daysTotal, rowsKept: done.progress.rowsKept, eventsRead: done.report.source.eventsRead, loopDelayMaxMs: Math.round(delay.max / 1e6), loopDelayP99Ms: Math.round(delay.percentile(99) / 1e6) }));
    expect(done.status).toBe('done');
  });
});
