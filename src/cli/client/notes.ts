import { type Command, InvalidArgumentError, Option } from 'commander';
import { type Item, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

type Note = Item<'/api/v1/admin/websites/{websiteId}/notes', 'get'>;

function wholeNumber(minimum: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < minimum) throw new InvalidArgumentError(`must be a whole number of ${minimum} or more`);
    return number;
  };
}

function printNotes(notes: Note[]): void {
  printTable(
    notes,
    [
      { header: 'id', value: (n) => n.id },
      { header: 'timestamp', value: (n) => n.timestamp },
      { header: 'text', value: (n) => n.text },
      { header: 'author', value: (n) => n.author?.name ?? null },
    ],
    'No notes.',
  );
}

interface ListOptions extends WebsiteOption, JsonOption {
  from?: string;
  to?: string;
  timezone?: string;
  order?: 'asc' | 'desc';
  search?: string;
  limit?: number;
  offset?: number;
}

interface WriteOptions extends WebsiteOption, JsonOption {
  text?: string;
  at?: string;
  idempotencyKey?: string;
}

export function registerNoteCommands(program: Command): void {
  const notes = program
    .command('notes')
    .description("notes on a website's charts: list, create, update and delete")
    .addHelpText(
      'after',
      `
Examples:
  $ sightline notes list -w example.com --from 2026-03-01 --to 2026-03-31
  $ sightline notes create -w example.com --text "Launched the new pricing page" --at 2026-03-10T09:00:00Z
  $ sightline notes update -w example.com 665f1c2e9b1d4a0012345678 --text "Launched pricing v2"
  $ sightline notes delete -w example.com 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(
    withWebsite(
      notes
        .command('list')
        .description("the website's notes, newest first (--order asc: oldest first)")
        .option('--from <day>', "from this day (YYYY-MM-DD in the website's time zone) or ISO instant; with --to")
        .option('--to <day>', 'to this day, included, or ISO instant; with --from')
        .option('--timezone <zone>', "an IANA time zone in which --from and --to days are read (default the website's)")
        .addOption(new Option('--order <order>', 'newest (desc) or oldest (asc) first').choices(['asc', 'desc']))
        .option('--search <text>', 'only notes whose text contains this, ignoring case')
        .option('--limit <n>', 'how many notes (default 100, at most 1000)', wholeNumber(1))
        .option('--offset <n>', 'skip this many notes first', wholeNumber(0)),
    ),
    '{"data": [notes], "pagination": {limit, offset, total}}',
  ).action(
    action(async (options: ListOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const query = {
        ...(options.from !== undefined ? { startAt: options.from } : {}),
        ...(options.to !== undefined ? { endAt: options.to } : {}),
        ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
        ...(options.order !== undefined ? { order: options.order } : {}),
        ...(options.search !== undefined ? { q: options.search } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.offset !== undefined ? { offset: options.offset } : {}),
      };
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/notes', { params: { path: { websiteId }, query } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        printNotes(body.data);
        const { offset, total } = body.pagination;
        if (total > body.data.length) say(`Notes ${offset + 1}-${offset + body.data.length} of ${total}.`);
      });
    }),
  );

  withJson(
    withWebsite(
      notes
        .command('create')
        .description('add a note')
        .requiredOption('--text <text>', 'the note (1 to 500 characters)')
        .option('--at <when>', "the moment it is about: an ISO-8601 instant, or a YYYY-MM-DD day (noon in the website's time zone); default now")
        .option('--idempotency-key <key>', 'a key that makes a retry answer the same note instead of adding another'),
    ),
    'the new note',
  ).action(
    action(async (options: WriteOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/notes', {
          params: { path: { websiteId } },
          body: {
            text: options.text!,
            ...(options.at !== undefined ? { timestamp: options.at } : {}),
            ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
          },
        }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printNotes(body.data));
      say(`Created note ${body.data[0]!.id}.`);
    }),
  );

  withJson(
    withWebsite(
      notes
        .command('update')
        .description('change a note; only what is given changes')
        .argument('<noteId>', 'the note id (from "sightline notes list")')
        .option('--text <text>', 'the new text')
        .option('--at <when>', 'the new moment: an ISO-8601 instant or a YYYY-MM-DD day, as on create'),
    ),
    'the updated note',
  ).action(
    action(async (noteId: string, options: WriteOptions) => {
      const request = {
        ...(options.text !== undefined ? { text: options.text } : {}),
        ...(options.at !== undefined ? { timestamp: options.at } : {}),
      };
      if (Object.keys(request).length === 0) usage('nothing to change: give --text or --at');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/notes/{noteId}', { params: { path: { websiteId, noteId } }, body: request }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printNotes(body.data));
      say(`Updated note ${noteId}.`);
    }),
  );

  withJson(
    withWebsite(
      notes
        .command('delete')
        .description('delete a note')
        .argument('<noteId>', 'the note id')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (noteId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`delete note ${noteId}`, 'It cannot be brought back.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/notes/{noteId}', { params: { path: { websiteId, noteId } }, body: {} }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Note deleted.');
    }),
  );
}
