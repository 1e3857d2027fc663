import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { BREAKDOWNS } from '../src/modules/analytics/breakdowns.ts';
import { analyticsFixture } from './helpers/analytics-fixture.ts';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';

// sightline segments, sightline analytics export and sightline export as processes against a
// listening server (issue 37 items 2 and 5).

process.env.SIGHTLINE_FORCE_TTY = '250';

describe('sightline segments and export', { timeout: 120_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  it('saves, lists, shares and deletes a segment', async () => {
    const { owner, website } = await analyticsFixture(t);
    const created = await cli.run(['segments', 'create', '-w', website.id, '--name', 'US blog', '--filter', 'country=is:US', '--filter', 'page=contains:/blog', '--json'], { token: owner.token });
    expectExit(created, 0);
    const [segment] = parseJson(created);
    expect(segment).toMatchObject({ name: 'US blog', filters: { filter_country: 'is:US', filter_page: 'contains:/blog' }, shared: false });
    expectExit(await cli.run(['segments', 'update', '-w', website.id, segment.id, '--shared'], { token: owner.token }), 0);
    const listed = await cli.run(['segments', 'list', '-w', website.id, '--json'], { token: owner.token });
    expect(parseJson(listed)).toEqual([expect.objectContaining({ id: segment.id, shared: true })]);
    const bad = await cli.run(['segments', 'create', '-w', website.id, '--name', 'x', '--filter', 'planet=is:Mars'], { token: owner.token });
    expectExit(bad, 1);
    expect(bad.stderr).toMatch(/filter_planet/);
    expectExit(await cli.run(['segments', 'delete', '-w', website.id, segment.id, '--yes'], { token: owner.token }), 0);
    expect(parseJson(await cli.run(['segments', 'list', '-w', website.id, '--json'], { token: owner.token }))).toEqual([]);
  });

  it('writes the reports zip and the raw NDJSON to files', async () => {
    const { owner, website } = await analyticsFixture(t);
    const dir = mkdtempSync(join(tmpdir(), 'sightline-export-'));
    const zipFile = join(dir, 'reports.zip');
    expectExit(await cli.run(['analytics', 'export', '-w', website.id, '--start-at', '2026-03-01', '--end-at', '2026-03-31', '--filter', 'country=is:US', '-o', zipFile], { token: owner.token }), 0);
    const files = unzipSync(new Uint8Array(readFileSync(zipFile)));
    expect(Object.keys(files)).toHaveLength(BREAKDOWNS.length + 2);
    expect(Buffer.from(files['overview.csv']!).toString('utf8')).toMatch(/^visitors,/);

    const rawFile = join(dir, 'raw.ndjson.gz');
    expectExit(await cli.run(['export', '-w', website.id, '--gzip', '-o', rawFile], { token: owner.token }), 0);
    const lines = gunzipSync(readFileSync(rawFile)).toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: 'sightline-export', version: 1, websiteId: website.id });
    expect(lines.filter((line) => line.type === 'event')).toHaveLength(8);
    expect(lines.filter((line) => line.type === 'payment')).toHaveLength(1);

    const noPeriod = await cli.run(['analytics', 'export', '-w', website.id], { token: owner.token });
    expectExit(noPeriod, 2);
  });
});
