import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../src/db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../src/db/clickhouse/clickhouse-schema.ts';
import { HAS_SCRIPT, expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { describeWithClickHouse, testClickHouseDatabase } from './helpers/clickhouse.ts';
import { type CliProcess, Processes, freePort, sleep, waitForHealthy } from './helpers/processes.ts';

// `sightline admin delete-website` with CLICKHOUSE_URL set: the events it is about to delete are
// in ClickHouse, so its prompt counts them there and its report says how many went.

describeWithClickHouse('sightline admin delete-website with the events on ClickHouse', () => {
  const cli = useCliHarness();
  const processes = new Processes();
  const dir = mkdtempSync(join(tmpdir(), 'sightline-delete-ch-'));
  const clickhouse = testClickHouseDatabase();
  const env = { DATABASE_URL: `sqlite:${join(dir, 'sightline.db')}`, CLICKHOUSE_URL: clickhouse.url };
  let server: CliProcess;
  let baseUrl: string;
  let ch: ClickHouse;

  const admin = (args: string[]) => cli.run(['admin', ...args], { env });
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 Safari/537.36', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const storedEvents = async (websiteId: string) =>
    Number((await ch.rows<{ n: string }>(sql`select count() as n from events where website_id = ${websiteId}`))[0]?.n ?? 0);

  /** A website of its own with `pageviews` events, once they are all in ClickHouse. */
  async function websiteWithEvents(pageviews: number) {
    const email = `owner-${randomBytes(3).toString('hex')}@example.com`;
    const created = await admin(['create-account', '--email', email, '--name', 'Owner', '--json']);
    expectExit(created, 0);
    const { token } = parseJson(created) as { token: string };
    const domain = `site-${randomBytes(3).toString('hex')}.example.com`;
    const website = (await post('/api/v1/admin/websites', { domain, timezone: 'UTC' }, token)).body.data[0] as { id: string; trackingId: string };
    for (let i = 0; i < pageviews; i++) {
      const sent = await post('/api/events', { websiteId: website.trackingId, domain, href: `https://${domain}/p${i}`, visitorId: randomUUID(), type: 'pageview' });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }
    for (let waited = 0; (await storedEvents(website.id)) < pageviews; waited += 50) {
      if (waited > 20_000) throw new Error('the events did not reach ClickHouse');
      await sleep(50);
    }
    return { id: website.id, domain };
  }

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = processes.spawn(['serve'], { ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' });
    await waitForHealthy(baseUrl, server);
    // Creates the tables if the server has not yet (it does so on its first use), as the CLI does.
    ch = openClickHouse(clickhouse.url, migrateClickHouse);
  });

  afterAll(async () => {
    processes.killAll();
    await ch?.close();
    await clickhouse.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!HAS_SCRIPT)('counts the events in ClickHouse in its prompt', { timeout: 60_000 }, async () => {
    const site = await websiteWithEvents(3);
    const answered = await cli.runInTerminal(['admin', 'delete-website', '--domain', site.domain], [{ waitFor: /Type the domain \(.+\) to delete it: /, type: 'no' }], { env });
    expectExit(answered, 1);
    expect(answered.stdout).toContain('3 events, 0 payments');
    expect(await storedEvents(site.id)).toBe(3);
  });

  it('deletes them from ClickHouse and reports how many, leaving other websites alone', { timeout: 60_000 }, async () => {
    const site = await websiteWithEvents(4);
    const other = await websiteWithEvents(2);
    const deleted = await admin(['delete-website', '--domain', site.domain, '--confirm', site.domain, '--json']);
    expectExit(deleted, 0);
    expect(parseJson(deleted)).toMatchObject({ websiteId: site.id, clickhouseEvents: 4 });
    expect(await storedEvents(site.id)).toBe(0);
    expect(await storedEvents(other.id)).toBe(2);

    const text = await admin(['delete-website', '--domain', other.domain, '--confirm', other.domain]);
    expectExit(text, 0);
    expect(text.stdout).toContain('events in ClickHouse 2');
  });
});
