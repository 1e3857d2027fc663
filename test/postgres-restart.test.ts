import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, Sightline, type Site, adminRead, adminWrite, expectUnavailable, ingest } from './helpers/listening-sightline.ts';
import { PrivatePostgres, privatePostgresProblem } from './helpers/private-postgres.ts';
import { sleep } from './helpers/processes.ts';

// A real PostgreSQL restart (and a crash) in the middle of a load, on a server of the test's own:
// Sightline keeps running, answers 503 while the database is down, serves the very next requests
// once it is back without being restarted, and every write it acknowledged is stored exactly once.

interface Load {
  answers: Answer[];
  events: string[];
  websites: string[];
  stop(): Promise<void>;
}

function startLoad(site: Site): Load {
  let running = true;
  const load: Load = { answers: [], events: [], websites: [], stop: async () => {} };
  const worker = async (send: (s: Site) => Promise<Answer>, keep: (answer: Answer) => void) => {
    while (running) {
      const answer = await send(site);
      load.answers.push(answer);
      if (answer.status === 200) keep(answer);
      else await sleep(20);
    }
  };
  const workers = [
    ...Array.from({ length: 4 }, () =>
      worker(ingest, (a) => load.events.push(a.body.eventId)),
    ),
    ...Array.from({ length: 2 }, () => worker(adminWrite, (a) => load.websites.push(a.body.data[0].id))),
    worker(adminRead, () => {}),
  ];
  load.stop = async () => {
    running = false;
    await Promise.all(workers);
  };
  return load;
}

describe.skipIf(privatePostgresProblem)('a PostgreSQL restart under load', () => {
  const postgres = new PrivatePostgres();
  const sightline = new Sightline();
  let admin: pg.Client;

  beforeAll(async () => {
    await postgres.start();
    await sightline.start(postgres.url);
  }, 120_000);

  afterAll(async () => {
    await admin?.end().catch(() => {});
    await sightline.stop().catch(() => {});
    postgres.destroy();
  });

  async function storedIds(table: string, ids: string[]): Promise<string[]> {
    admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    try {
      const { rows } = await admin.query(`select id from ${table} where id = any($1)`, [ids]);
      return rows.map((row) => row.id).sort();
    } finally {
      await admin.end();
    }
  }

  for (const mode of ['fast', 'immediate'] as const) {
    it(`survives a ${mode === 'fast' ? 'restart' : 'crash (immediate stop)'} of PostgreSQL mid-load`, async () => {
      const site = sightline.site;
      const load = startLoad(site);
      await sleep(1500);
      const acknowledgedBefore = load.events.length;
      postgres.stop(mode);
      // While it is down: 503 with Retry-After, never a 500 or a dead process.
      const during = await adminRead(site);
      expectUnavailable(during);
      await sleep(1000);
      postgres.startAgain();
      // The very next requests after it is back succeed, with no restart of Sightline.
      for (const request of [adminRead, adminWrite, ingest]) {
        const answer = await request(site);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      await sleep(1500);
      await load.stop();

      const unexpected = load.answers.filter((a) => a.status !== 200 && a.status !== 503);
      expect(unexpected.map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
      for (const answer of load.answers.filter((a) => a.status === 503)) expectUnavailable(answer);
      expect(acknowledgedBefore).toBeGreaterThan(0);
      expect(load.events.length).toBeGreaterThan(acknowledgedBefore); // it took events again after

      const eventIds = load.events;
      expect(await storedIds('events', eventIds)).toEqual([...eventIds].sort());
      expect(await storedIds('websites', load.websites)).toEqual([...load.websites].sort());
      // Exactly once: every request sends a new visitor id, so no visitor may have two events.
      admin = new pg.Client({ connectionString: postgres.url });
      await admin.connect();
      const { rows } = await admin.query('select visitor_id, count(*)::int as n from events group by visitor_id having count(*) > 1');
      await admin.end();
      expect(rows).toEqual([]);
    }, 120_000);
  }
});
