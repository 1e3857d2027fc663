import type { Command } from 'commander';
import { type Item, action, call, connect, usage, websiteIdOf } from './api.ts';
import { filterParams, withFilters } from './breakdowns.ts';
import { type JsonOption, done, emit, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

// `sightline segments ...`: saved filter sets of a website (issue 37 item 5).

type Segment = Item<'/api/v1/admin/websites/{websiteId}/segments', 'get'>;

function printSegments(segments: Segment[]): void {
  printTable(
    segments,
    [
      { header: 'id', value: (s) => s.id },
      { header: 'name', value: (s) => s.name },
      { header: 'filters', value: (s) => Object.entries(s.filters).map(([name, value]) => `${name.replace(/^filter_/, '')}=${value}`).join(' ') },
      { header: 'shared', value: (s) => (s.shared ? 'yes' : 'no') },
      { header: 'owner', value: (s) => s.owner.name },
    ],
    'No segments.',
  );
}

interface WriteOptions extends WebsiteOption, JsonOption {
  name?: string;
  filter?: string[];
  shared?: boolean;
}

export function registerSegmentCommands(program: Command): void {
  const segments = program
    .command('segments')
    .description('saved filter sets of a website, personal or shared with its team: list, create, update and delete')
    .addHelpText(
      'after',
      `
Examples:
  $ sightline segments list -w example.com
  $ sightline segments create -w example.com --name "US blog" --filter country=is:US --filter page=contains:/blog --shared
  $ sightline segments update -w example.com 665f1c2e9b1d4a0012345678 --no-shared
  $ sightline segments delete -w example.com 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(withWebsite(segments.command('list').description("the caller's segments and the team's shared ones, by name")), '{"data": [segments]}').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(connection.client.GET('/api/v1/admin/websites/{websiteId}/segments', { params: { path: { websiteId } } }), connection.settings.baseUrl);
      emit(options, body, () => printSegments(body.data));
    }),
  );

  withJson(
    withFilters(
      withWebsite(
        segments
          .command('create')
          .description('save filters as a segment')
          .requiredOption('--name <name>', 'the name (1 to 100 characters)')
          .option('--shared', "share it with the website's team (owners and members)"),
      ),
    ),
    'the new segment',
  ).action(
    action(async (options: WriteOptions) => {
      const filters = filterParams(options.filter);
      if (Object.keys(filters).length === 0) usage('give at least one --filter');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/segments', {
          params: { path: { websiteId } },
          body: { name: options.name!, filters, ...(options.shared !== undefined ? { shared: options.shared } : {}) },
        }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printSegments(body.data));
      say(`Created segment ${body.data[0]!.id}.`);
    }),
  );

  withJson(
    withFilters(
      withWebsite(
        segments
          .command('update')
          .description('change a segment; only what is given changes (--filter replaces all its filters)')
          .argument('<segmentId>', 'the segment id (from "sightline segments list")')
          .option('--name <name>', 'the new name')
          .option('--shared', 'share it with the team')
          .option('--no-shared', 'keep it to yourself'),
      ),
    ),
    'the updated segment',
  ).action(
    action(async (segmentId: string, options: WriteOptions) => {
      const filters = filterParams(options.filter);
      const request = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(Object.keys(filters).length > 0 ? { filters } : {}),
        ...(options.shared !== undefined ? { shared: options.shared } : {}),
      };
      if (Object.keys(request).length === 0) usage('nothing to change: give --name, --filter, --shared or --no-shared');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/segments/{segmentId}', { params: { path: { websiteId, segmentId } }, body: request }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printSegments(body.data));
      say(`Updated segment ${segmentId}.`);
    }),
  );

  withJson(
    withWebsite(
      segments
        .command('delete')
        .description('delete a segment')
        .argument('<segmentId>', 'the segment id')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (segmentId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`delete segment ${segmentId}`, 'It cannot be brought back.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/segments/{segmentId}', { params: { path: { websiteId, segmentId } }, body: {} }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Segment deleted.');
    }),
  );
}
