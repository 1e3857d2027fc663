import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';
import { plausibleExport, zipOf } from './helpers/plausible-export.ts';
import { createUmamiDatabase, insertEvents, insertSessions, insertWebsite } from './helpers/umami-fixture.ts';

// sightline import as a process against a listening server whose import worker runs: the upload,
// the progress bar followed to the end, the report, then the list and the deletion.

process.env.TZ = 'UTC';

describe('sightline import', { timeout: 90_000 }, () => {
  const cli = useCliHarness({ imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 2 } });
  const { t } = cli;

  it('uploads the zip, shows the progress until the import is done, lists it and deletes it', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const file = join(cli.newHome(), 'plausible.zip');
    writeFileSync(file, zipOf(plausibleExport(['2025-01-01', '2025-01-02'])));

    const run = await cli.run(['import', website.domain, file, '--label', 'Old site', '--json'], { token: owner.token });
    expectExit(run, 0);
    const imported = parseJson(run);
    expect(imported).toMatchObject({ label: 'Old site', status: 'done', firstDay: '2025-01-01', lastDay: '2025-01-02', progress: { rowsRead: 28, rowsKept: 28, percent: 100 } });
    expect(run.stderr).toMatch(/Uploaded .*plausible\.zip .*queued/);
    expect(run.stderr).toMatch(/\[#{30}\] 100% {2}10\/10 files, 28 rows read \(28 kept, 0 skipped\) {2}done/);

    const listed = await cli.run(['imports', 'list', '-w', website.id, '--json'], { token: owner.token });
    expectExit(listed, 0);
    expect(parseJson(listed).map((item: { id: string }) => item.id)).toEqual([imported.id]);

    const again = await cli.run(['import', website.id, file], { token: owner.token });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already imported.*\(HTTP 409\)/);

    const deleted = await cli.run(['imports', 'delete', imported.id, '-w', website.id, '--yes'], { token: owner.token });
    expectExit(deleted, 0);
    const after = await cli.run(['imports', 'list', '-w', website.id, '--json'], { token: owner.token });
    expect(parseJson(after)).toEqual([]);
  });

  it('says what is wrong with a file that is not an export, and with a missing file', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const file = join(cli.newHome(), 'notes.zip');
    writeFileSync(file, zipOf({ 'notes.txt': 'hello' }));
    const refused = await cli.run(['import', website.id, file], { token: owner.token });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/no imported_\*\.csv.*\(HTTP 400\)/);
    const missing = await cli.run(['import', website.id, join(cli.newHome(), 'absent.zip')], { token: owner.token });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*absent\.zip: ENOENT/);
  });

  it('lists the websites of an Umami database, then imports one with the progress in days, the URL from UMAMI_DATABASE_URL', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const umami = await createUmamiDatabase();
    try {
      const umamiWebsite = await insertWebsite(umami.client, 'Old blog', website.domain);
      const session = { id: randomUUID(), browser: 'firefox', os: 'Linux', device: 'desktop', country: 'DE', region: 'DE-BE' };
      await insertSessions(umami.client, umamiWebsite, [session]);
      const visit = randomUUID();
      const at = DateTime.fromISO('2025-03-01T10:00:00Z');
      await insertEvents(umami.client, umamiWebsite, [
        { sessionId: session.id, visitId: visit, at, type: 1, path: '/', hostname: website.domain },
        { sessionId: session.id, visitId: visit, at: at.plus({ days: 2 }), type: 1, path: '/docs', hostname: website.domain },
      ]);
      const env = { UMAMI_DATABASE_URL: umami.url };

      const listed = await cli.run(['import', 'umami', '-w', website.domain, '--json'], { token: owner.token, env });
      expectExit(listed, 0);
      expect(parseJson(listed)).toEqual([expect.objectContaining({ id: umamiWebsite, name: 'Old blog', events: 2 })]);

      const run = await cli.run(['import', 'umami', '-w', website.id, '--umami-website', umamiWebsite, '--json'], { token: owner.token, env });
      expectExit(run, 0);
      expect(parseJson(run)).toMatchObject({ source: 'umami', status: 'done', firstDay: '2025-03-01', lastDay: '2025-03-03', progress: { daysTotal: 3, daysDone: 3, percent: 100 } });
      expect(run.stderr).toMatch(/Import .* of the Umami website Old blog is queued/);
      expect(run.stderr).toMatch(/\[#{30}\] 100% {2}3\/3 days, \d+ rows read \(\d+ kept, 0 skipped\) {2}done/);

      const again = await cli.run(['import', 'umami', '-w', website.id, '--umami-website', umamiWebsite], { token: owner.token, env });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/already imported.*\(HTTP 409\)/);
      const missing = await cli.run(['import', 'umami', '-w', website.id], { token: owner.token, env: { UMAMI_DATABASE_URL: undefined } });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--database-url/);
    } finally {
      await umami.drop();
    }
  });
});
