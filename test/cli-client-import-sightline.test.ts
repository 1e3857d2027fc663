import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createAccount, createWebsite } from './helpers/factories.ts';
import { exportFile, pageviewRecord, websiteRecord } from './helpers/sightline-export-file.ts';

// sightline import of Sightline's own export (NDJSON or its gzip) as a process against a listening
// server whose import worker runs: the file given with -w, the progress bar of the records read
// followed to the end, the report per record type; refused files and argument mistakes.

describe('sightline import of a Sightline export', { timeout: 90_000 }, () => {
  const cli = useCliHarness({ imports: { jobs: true, maxUploadBytes: 1024 * 1024, chunkRows: 3 } });
  const { t } = cli;
  const hex = (n: number) => n.toString(16).padStart(24, '0');
  const text = exportFile([
    websiteRecord(),
    ...Array.from({ length: 10 }, (_, i) => pageviewRecord(hex(0xd000 + i), `cli-v${i % 3}`, new Date(Date.UTC(2026, 2, 5, 10, i)).toISOString())),
  ]);

  it('uploads the gzip given with -w, shows the records read until done, and prints the report', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const file = join(cli.newHome(), 'sightline-export.ndjson.gz');
    writeFileSync(file, gzipSync(text));
    const run = await cli.run(['import', file, '-w', website.domain], { token: owner.token });
    expectExit(run, 0);
    expect(run.stderr).toMatch(/Uploaded .*sightline-export\.ndjson\.gz .*queued/);
    expect(run.stderr).toMatch(/\[#{30}\] 100% {2}11\/11 records read \(11 kept, 0 skipped\) {2}done/);
    // The report, one row per record type (a table without its header when not on a terminal).
    expect(run.stdout).toMatch(/^website\t1\t1\t0$/m);
    expect(run.stdout).toMatch(/^event\t10\t10\t0$/m);
    expect(`${run.stdout}${run.stderr}`).toMatch(/took the export's settings/);

    // The plain NDJSON, the website first: the same export again is refused.
    const plain = join(cli.newHome(), 'sightline-export.ndjson');
    writeFileSync(plain, text);
    const again = await cli.run(['import', website.id, plain, '--json'], { token: owner.token });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already imported.*\(HTTP 409\)/);
    const listed = await cli.run(['imports', 'list', '-w', website.id, '--json'], { token: owner.token });
    expect(parseJson(listed)).toEqual([expect.objectContaining({ source: 'sightline-export', status: 'done', progress: expect.objectContaining({ rowsKept: 11 }) })]);
  });

  it('says what is wrong with a cut export and with the arguments', async () => {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const cut = join(cli.newHome(), 'cut.ndjson');
    writeFileSync(cut, text.split('\n').slice(0, 5).join('\n'));
    const refused = await cli.run(['import', cut, '-w', website.id], { token: owner.token });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/cut short.*\(HTTP 400\)/);
    const both = await cli.run(['import', website.id, cut, '-w', website.id], { token: owner.token });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/either as -w or as the first argument/);
    const none = await cli.run(['import', cut], { token: owner.token });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/which website\?/);
  });
});
