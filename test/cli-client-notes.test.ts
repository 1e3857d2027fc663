import { describe, expect, it } from 'vitest';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';

// sightline notes as a process against a listening server: days as --at, the list's --order and
// --timezone, as the API takes them (website-api.md section 7).

process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

describe('sightline notes', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  it('creates notes at a day, lists them oldest first and reads --from/--to days in --timezone', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const utc = await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'UTC' } });
    expect(utc.status, utc.raw).toBe(200);
    for (const [text, at] of [
      ['Launch', '2026-03-10'],
      ['Pricing v2', '2026-03-12T23:30:00Z'],
    ]) {
      expectExit(await cli.run(['notes', 'create', '-w', website.id, '--text', text!, '--at', at!], { token: owner.token }), 0);
    }

    const oldest = await cli.run(['notes', 'list', '-w', website.id, '--order', 'asc', '--json'], { token: owner.token });
    expectExit(oldest, 0);
    // A day is noon of that day in the website's time zone (UTC here).
    expect(parseJson(oldest).data.map((note: { text: string; timestamp: string }) => [note.text, note.timestamp])).toEqual([
      ['Launch', '2026-03-10T12:00:00.000Z'],
      ['Pricing v2', '2026-03-12T23:30:00.000Z'],
    ]);
    const newest = await cli.run(['notes', 'list', '-w', website.id, '--json'], { token: owner.token });
    expect(parseJson(newest).data.map((note: { text: string }) => note.text)).toEqual(['Pricing v2', 'Launch']);

    // 23:30 UTC on the 12th is the 13th in Tokyo: that day holds it there, not in UTC.
    const day = ['notes', 'list', '-w', website.id, '--from', '2026-03-13', '--to', '2026-03-13', '--json'];
    expect(parseJson(await cli.run(day, { token: owner.token })).data).toEqual([]);
    const tokyo = await cli.run([...day, '--timezone', 'Asia/Tokyo'], { token: owner.token });
    expectExit(tokyo, 0);
    expect(parseJson(tokyo).data.map((note: { text: string }) => note.text)).toEqual(['Pricing v2']);
  });

  it('refuses an order it does not know before asking the server, and a bad zone as the server says', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const order = await cli.run(['notes', 'list', '-w', website.id, '--order', 'sideways'], { token: owner.token });
    expect(order.code).not.toBe(0);
    expect(order.stderr).toMatch(/--order.*sideways|sideways.*(asc|desc)/);
    const zone = await cli.run(['notes', 'list', '-w', website.id, '--timezone', 'Mars/Olympus'], { token: owner.token });
    expect(zone.code).not.toBe(0);
    expect(zone.stderr).toMatch(/timezone/);
  });
});
