import { type Command, InvalidArgumentError } from 'commander';
import { action, call, connect, websiteIdOf } from './api.ts';
import { type JsonOption, done, emit, printTable, say, withJson } from './output.ts';
import { type ConfirmOptions, confirm } from './prompt.ts';
import { type WebsiteOption, withWebsite } from './websites.ts';

// The owner's exchange rates: payments in another currency than the website's count at them.

function positiveRate(value: string): number {
  const rate = Number(value);
  if (!Number.isFinite(rate) || rate <= 0) throw new InvalidArgumentError('must be a number above 0');
  return rate;
}

export function registerCurrencyRateCommands(program: Command): void {
  const rates = program
    .command('rates')
    .description("exchange rates: payments in another currency count in the website's currency at these")
    .addHelpText(
      'after',
      `
Examples:
  $ sightline rates list -w example.com
  $ sightline rates set EUR 1.08 -w example.com
  $ sightline rates delete EUR -w example.com --yes`,
    );

  withJson(withWebsite(rates.command('list').description('the rates, and the currencies of payments that have none')), 'the rates').action(
    action(async (options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.GET('/api/v1/admin/websites/{websiteId}/currency-rates', { params: { path: { websiteId } } }),
        connection.settings.baseUrl,
      );
      emit(options, body, () => {
        printTable(
          body.data,
          [
            { header: 'currency', value: (r) => r.currency },
            { header: `rate (${body.currency})`, value: (r) => r.rate },
            { header: 'updated', value: (r) => r.updatedAt },
          ],
          'No rates.',
        );
        for (const missing of body.unconverted) {
          say(`${missing.currency}: ${missing.payments} payment(s), ${missing.amount} ${missing.currency}, count nowhere until a rate is set`);
        }
      });
    }),
  );

  withJson(
    withWebsite(
      rates
        .command('set')
        .description("set the rate of a currency (units of the website's currency per unit of it)")
        .argument('<currency>', 'an ISO-4217 code such as EUR')
        .argument('<rate>', 'e.g. 1.08', positiveRate),
    ),
    'the rate',
  ).action(
    action(async (currency: string, rate: number, options: WebsiteOption & JsonOption) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      const body = await call(
        connection.client.PUT('/api/v1/admin/websites/{websiteId}/currency-rates/{currency}', { params: { path: { websiteId, currency } }, body: { rate } }),
        connection.settings.baseUrl,
      );
      const set = body.data[0]!;
      done(options, body, `${set.currency} counts at ${set.rate}.`);
    }),
  );

  withJson(
    withWebsite(
      rates
        .command('delete')
        .description('delete the rate of a currency: its payments count nowhere again')
        .argument('<currency>', 'an ISO-4217 code such as EUR')
        .option('-y, --yes', 'do not ask for confirmation (needed when there is no terminal)'),
    ),
    'the result',
  ).action(
    action(async (currency: string, options: WebsiteOption & JsonOption & ConfirmOptions) => {
      const connection = connect();
      const websiteId = await websiteIdOf(connection, options.website);
      await confirm(`delete the rate of ${currency.toUpperCase()} on ${options.website}`, 'Its payments count in no report until a rate is set again.', options);
      const body = await call(
        connection.client.DELETE('/api/v1/admin/websites/{websiteId}/currency-rates/{currency}', { params: { path: { websiteId, currency } }, body: {} }),
        connection.settings.baseUrl,
      );
      done(options, body, body.data[0]!.message);
    }),
  );
}
