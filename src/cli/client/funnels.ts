import type { Command } from 'commander';
import { type Item, type RequestBody, action, call, connect, usage, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm, readJsonBody } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

type Funnel = Item<'/api/v1/admin/websites/{websiteId}/funnels', 'get'>;
type CreateBody = RequestBody<'/api/v1/admin/websites/{websiteId}/funnels', 'post'>;
type UpdateBody = RequestBody<'/api/v1/admin/websites/{websiteId}/funnels/{funnelId}', 'put'>;
type StepInput = CreateBody['steps'][number];

const STEP_HELP = 'a step, in order (repeat 2 to 8 times): pageview:<path or URL> or goal:<goal name>';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** "pageview:/pricing" or "goal:signup" (the target is everything after the first colon). */
export function parseStep(spec: string): StepInput {
  const colon = spec.indexOf(':');
  const type = colon < 0 ? '' : spec.slice(0, colon).trim().toLowerCase();
  const target = colon < 0 ? '' : spec.slice(colon + 1).trim();
  if ((type === 'pageview' || type === 'page') && target) return { type: 'pageview', url: target };
  if (type === 'goal' && target) return { type: 'goal', goalName: target };
  usage(`--step "${spec}": expected pageview:<path or URL> or goal:<goal name>, e.g. --step pageview:/pricing --step goal:signup`);
}

function describeStep(step: Funnel['steps'][number]): string {
  return step.type === 'goal' ? `goal:${step.goalName}` : `${step.url}`;
}

function printFunnels(funnels: Funnel[]): void {
  printTable(
    funnels,
    [
      { header: 'id', value: (f) => f.id },
      { header: 'name', value: (f) => f.name },
      { header: 'steps', value: (f) => f.steps.map(describeStep).join(' > ') },
      { header: 'active', value: (f) => f.isActive },
      { header: 'updated', value: (f) => f.updatedAt },
    ],
    'No active funnels.',
  );
}

interface CreateOptions extends WebsiteOption, JsonOption {
  name?: string;
  step?: string[];
  body?: string;
}

interface UpdateOptions extends CreateOptions {
  active?: boolean;
}

async function funnelBody(options: CreateOptions): Promise<Record<string, unknown>> {
  const base = options.body ? await readJsonBody(options.body) : {};
  return {
    ...base,
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.step ? { steps: options.step.map(parseStep) } : {}),
  };
}

export function registerFunnelCommands(program: Command): void {
  const funnels = program
    .command('funnels')
    .description('conversion funnels of 2 to 8 steps: list, create, update and delete')
    .addHelpText(
      'after',
      `
A step is a pageview (a path or URL) or a goal. For step names of your own, use --body with
{"name": "...", "steps": [{"type": "pageview", "url": "/pricing", "name": "Pricing"}, ...]}.

Examples:
  $ sightline funnels list -w example.com
  $ sightline funnels create -w example.com --name "Checkout" --step pageview:/pricing --step goal:signup --step goal:purchase
  $ sightline funnels create -w example.com --body funnel.json
  $ sightline funnels update -w example.com 665f1c2e9b1d4a0012345678 --name "Checkout v2"
  $ sightline funnels delete -w example.com 665f1c2e9b1d4a0012345678 --yes`,
    );

  withJson(withWebsite(funnels.command('list').description("the website's active funnels, oldest first")), 'the funnels').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/funnels', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printFunnels(body.data));
    }),
  );

  withJson(
    withWebsite(
      funnels
        .command('create')
        .description('create a funnel')
        .option('--name <name>', 'the funnel name (1 to 100 characters, unique among active funnels)')
        .option('--step <step>', STEP_HELP, collect)
        .option('--body <file>', 'a JSON funnel {"name", "steps"} (- for stdin); --name and --step override its fields'),
    ),
    'the new funnel',
  ).action(
    action(async (options: CreateOptions) => {
      const request = await funnelBody(options);
      if (request.name === undefined || request.steps === undefined) usage('give --name and at least two --step options (or --body)');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.POST('/api/v1/admin/websites/{websiteId}/funnels', {
          params: { path: { websiteId } },
          body: request as CreateBody,
        }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printFunnels(body.data));
      say(`Created funnel "${body.data[0]!.name}" (${body.data[0]!.id}).`);
    }),
  );

  withJson(
    withWebsite(
      funnels
        .command('update')
        .description('change a funnel; only what is given changes (--step replaces the whole list)')
        .argument('<funnelId>', 'the funnel id (from "sightline funnels list")')
        .option('--name <name>', 'the new name')
        .option('--step <step>', `${STEP_HELP}; replaces every step`, collect)
        .option('--active', 'revive a deleted funnel')
        .option('--body <file>', 'a JSON object of fields to send (- for stdin); the options above override its fields'),
    ),
    'the updated funnel',
  ).action(
    action(async (funnelId: string, options: UpdateOptions) => {
      const request = { ...(await funnelBody(options)), ...(options.active ? { isActive: true } : {}) };
      if (Object.keys(request).length === 0) usage('nothing to change: give --name, --step, --active or --body');
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/funnels/{funnelId}', {
          params: { path: { websiteId, funnelId } },
          body: request as UpdateBody,
        }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => printFunnels(body.data));
      say(`Updated funnel "${body.data[0]!.name}".`);
    }),
  );

  withJson(
    withWebsite(
      funnels
        .command('delete')
        .description('delete a funnel (it leaves the list; "funnels update <id> --active" brings it back)')
        .argument('<funnelId>', 'the funnel id')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (funnelId: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`delete funnel ${funnelId}`, 'It disappears from the funnel list.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/funnels/{funnelId}', {
          params: { path: { websiteId, funnelId } },
          body: {},
        }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]?.message ?? 'Funnel deleted.');
    }),
  );
}
