import type { Command } from 'commander';
import { type RequestBody, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printJson, printTable, withJson } from './output.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

type CustomizeBody = RequestBody<'/api/v1/admin/websites/{websiteId}/goals/customizations', 'patch'>;

interface ListOptions extends WebsiteOption, JsonOption {
  startAt?: string;
  endAt?: string;
}

interface CustomizeOptions extends WebsiteOption, JsonOption {
  goal: string;
  displayName?: string | false;
  color?: string | false;
  description?: string | false;
}

const nullable = <T>(value: T | false | undefined): T | null | undefined => (value === false ? null : value);

export function registerGoalCommands(program: Command): void {
  const goals = program
    .command('goals')
    .description("tracked goals and their display names, colors and descriptions")
    .addHelpText(
      'after',
      `
Customizations change how a goal is shown, never its name: clients keep sending the same goal name.

Examples:
  $ sightline goals list -w example.com
  $ sightline goals list -w example.com --start-at 2026-05-01 --end-at 2026-05-31
  $ sightline goals colors -w example.com
  $ sightline goals customize -w example.com --goal signup --display-name "Sign-up" --color "#3b82f6"
  $ sightline goals customize -w example.com --goal signup --no-description
  $ sightline goals reset -w example.com --goal signup`,
    );

  withJson(
    withWebsite(
      goals
        .command('list')
        .description('the goals the website has tracked, most completions first')
        .option('--start-at <day>', 'count completions from this YYYY-MM-DD day (website time zone) or ISO instant; with --end-at')
        .option('--end-at <day>', 'count completions up to this day (included) or instant; with --start-at'),
    ),
    'the goals',
  ).action(
    action(async (options: ListOptions) => {
      if ((options.startAt === undefined) !== (options.endAt === undefined)) usage('give --start-at and --end-at together, or neither');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const query = options.startAt !== undefined ? { startAt: options.startAt, endAt: options.endAt } : {};
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/goals', { params: { path: { websiteId }, query } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'goal', value: (g) => g.goalName },
            { header: 'completions', value: (g) => g.completions },
            { header: 'visitors', value: (g) => g.visitors },
            { header: 'last completed', value: (g) => g.lastCompletedAt },
            { header: 'display name', value: (g) => g.displayName },
            { header: 'color', value: (g) => g.color },
          ],
          'No goals tracked yet.',
        ),
      );
    }),
  );

  withJson(
    withWebsite(goals.command('customizations').description('the saved display customizations')),
    '{"data": [customizations], "colors": [palette]}',
  ).action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/goals/customizations', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () =>
        printTable(
          body.data,
          [
            { header: 'goal', value: (c) => c.goalName },
            { header: 'display name', value: (c) => c.displayName },
            { header: 'color', value: (c) => c.color },
            { header: 'description', value: (c) => c.description },
            { header: 'updated', value: (c) => c.updatedAt },
          ],
          'No goal customizations.',
        ),
      );
    }),
  );

  withJson(
    withWebsite(goals.command('colors').description('the palette a goal color must come from')),
    'the palette',
  ).action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/goals/customizations', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      if (options.json) printJson(body.colors);
      else
        printTable(
          body.colors,
          [
            { header: 'color', value: (c) => c.color },
            { header: 'family', value: (c) => c.family },
            { header: 'label', value: (c) => c.label },
          ],
          'The palette is empty.',
        );
    }),
  );

  withJson(
    withWebsite(
      goals
        .command('customize')
        .description("set a goal's display name, color or description; only the options given change")
        .requiredOption('--goal <name>', 'the goal name, as clients send it')
        .option('--display-name <text>', 'the name shown instead (up to 80 characters)')
        .option('--no-display-name', 'clear the display name')
        .option('--color <hex>', 'a color of the palette, e.g. #3b82f6 (see "sightline goals colors")')
        .option('--no-color', 'clear the color')
        .option('--description <text>', 'a description (up to 300 characters)')
        .option('--no-description', 'clear the description'),
    ),
    'the customization',
  ).action(
    action(async (options: CustomizeOptions) => {
      const fields = {
        displayName: nullable(options.displayName),
        color: nullable(options.color),
        description: nullable(options.description),
      };
      const changes = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
      if (Object.keys(changes).length === 0) usage('nothing to change: give --display-name, --color or --description (or a --no- form)');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PATCH('/api/v1/admin/websites/{websiteId}/goals/customizations', {
          params: { path: { websiteId } },
          body: { goalName: options.goal, ...changes } as CustomizeBody,
        }),
        connection.settings.baseUrl,
      );
      const saved = body.data[0]!;
      done(
        options,
        body,
        `Goal ${saved.goalName}: display name ${saved.displayName ?? '-'}, color ${saved.color ?? '-'}, description ${saved.description ?? '-'}.`,
      );
    }),
  );

  withJson(
    withWebsite(
      goals
        .command('reset')
        .description('remove a goal\'s customization: it is shown with its name and default color again')
        .requiredOption('--goal <name>', 'the goal name'),
    ),
    'the result',
  ).action(
    action(async (options: WebsiteOption & JsonOption & { goal: string }) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/goals/customizations', {
          params: { path: { websiteId }, query: { goalName: options.goal } },
          body: {},
        }),
        connection.settings.baseUrl,
      );
      const reset = body.data[0]!;
      done(options, body, reset.deleted ? `Goal ${reset.goalName} reset to its defaults.` : `Goal ${reset.goalName} had no customization.`);
    }),
  );

}
