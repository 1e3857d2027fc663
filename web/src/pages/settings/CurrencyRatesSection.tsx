// The website's exchange rates (issue 35 item 3): payments in another currency than the website's
// count in no report until the owner sets a rate for that currency. The card names the website's
// currency, lists the rates (Edit, Remove), sets one, and warns about the currencies of recorded
// payments that still have none, each with a "Set rate" that fills the form. Rates apply when
// reports are read, so a rate counts every past payment at once; the card says so.
import type { JSX } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import {
  ActionButton,
  Card,
  DataTable,
  ErrorMessage,
  Loaded,
  Notice,
  SubmitButton,
  TextField,
  fieldErrors,
  formatCurrency,
  formatDateTime,
  formatNumber,
  useAsync,
  useConfirm,
  useSubmit,
} from '../../components/index.ts';
import { COMMON_CURRENCIES, type CurrencyRate, type UnconvertedCurrency } from '../../types.ts';
import type { SectionProps } from './section-props.ts';

/** The card's id: the analytics page's notice links to `settings#currencies`. */
export const CURRENCIES_ANCHOR = 'currencies';

interface Rates {
  /** The website's currency: every rate is into it. */
  currency: string;
  rates: CurrencyRate[];
  unconverted: UnconvertedCurrency[];
}

/** "1 GBP = 1.27 USD" (a rate with up to 6 decimals, as typed). */
const rateText = (from: string, rate: number, to: string) => `1 ${from} = ${formatNumber(rate, 6)} ${to}`;

/** "3 payments in GBP (£120.00)". */
const paymentsText = (row: UnconvertedCurrency) =>
  `${formatNumber(row.payments)} payment${row.payments === 1 ? '' : 's'} in ${row.currency} (${formatCurrency(row.amount, row.currency)}) count${row.payments === 1 ? 's' : ''} in no report`;

let currencyNames: Intl.DisplayNames | null | undefined;

/** A currency's name in the reader's language ("British Pound"), or null when the browser cannot say. */
function currencyName(code: string): string | null {
  if (currencyNames === undefined) {
    try {
      currencyNames = new Intl.DisplayNames(undefined, { type: 'currency' });
    } catch {
      currencyNames = null;
    }
  }
  try {
    const name = currencyNames?.of(code);
    return name && name !== code ? name : null;
  } catch {
    return null;
  }
}

export function CurrencyRatesSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/currency-rates`;
  // The website's currency is in the deps: a change of it (General, above) changes which rates apply.
  const state = useAsync(async (): Promise<Rates> => {
    const answer = await request<CurrencyRate>('GET', base);
    return {
      currency: (answer.currency as string | undefined) ?? website.currency,
      rates: answer.data,
      unconverted: (answer.unconverted as UnconvertedCurrency[] | undefined) ?? [],
    };
  }, [base, website.currency]);
  const [code, setCode] = useState('');
  const [rate, setRate] = useState('');
  // Bumped by Edit and Set rate: the rate field takes the focus, with the form in view.
  const [prefilled, setPrefilled] = useState(0);
  const { busy, error, notice, setError, setNotice, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const codeError = fields['path.currency'] ?? fields.currency;
  // The schema's "must be > 0" reads like code: said as a sentence.
  const rateError = fields.rate && /> ?0\b/.test(fields.rate) ? 'The rate must be more than 0.' : fields.rate;
  const otherError = codeError || rateError ? null : error;
  const codeId = useId();
  const rateId = useId();
  const listId = useId();
  const target = state.data?.currency ?? website.currency;

  useEffect(() => {
    if (!prefilled) return;
    const field = document.getElementById(rateId) as HTMLInputElement | null;
    field?.scrollIntoView({ block: 'center' });
    field?.focus();
    field?.select();
  }, [prefilled]);

  // Opened from the analytics page's notice (settings#currencies): the card in view, once it is there.
  const loaded = Boolean(state.data);
  useEffect(() => {
    if (!loaded || location.hash !== `#${CURRENCIES_ANCHOR}`) return;
    const card = document.getElementById(CURRENCIES_ANCHOR);
    card?.scrollIntoView({ block: 'start' });
  }, [loaded]);

  function prefill(currency: string, value: string) {
    setCode(currency);
    setRate(value);
    setError(null);
    setNotice(null);
    setPrefilled((count) => count + 1);
  }

  const save = onSubmit(async () => {
    const currency = code.trim().toUpperCase();
    const saved = await api.put<CurrencyRate>(`${base}/${encodeURIComponent(currency)}`, { rate: Number(rate) });
    setCode('');
    setRate('');
    state.reload();
    return `${saved.currency} now counts at ${rateText(saved.currency, saved.rate, target)} in every report, past payments included.`;
  });

  const removal = useConfirm((row: CurrencyRate) => ({
    title: `Remove the rate of ${row.currency}?`,
    message: `Payments in ${row.currency}, past ones included, will count in no report until a rate is set again.`,
    confirmLabel: 'Remove rate',
    onConfirm: async () => {
      await api.delete(`${base}/${encodeURIComponent(row.currency)}`);
      setNotice(`The rate of ${row.currency} is removed: its payments count in no report.`);
      state.reload();
    },
  }));

  const typed = code.trim().toUpperCase();
  const typedRate = Number(rate);
  // Offered while typing: the currencies that need a rate first, then the common ones.
  const suggestions = [...new Set([...(state.data?.unconverted.map((row) => row.currency) ?? []), ...COMMON_CURRENCIES])].filter(
    (currency) => currency !== target,
  );
  const example = suggestions[0] ?? 'EUR';
  // "1 EUR = ? USD" until a rate is typed, then "1 EUR = 1.08 USD".
  const hint = `1 ${typed || example} = ${rate.trim() && typedRate > 0 ? formatNumber(typedRate, 6) : '?'} ${target}`;
  const targetName = currencyName(target);

  return (
    <Card title="Currencies" id={CURRENCIES_ANCHOR}>
      <p>
        Revenue is counted in <strong>{target}</strong>
        {targetName ? ` (${targetName})` : ''}, the currency chosen under Website above. A payment in another currency counts the amount its payment
        provider converted it to in {target} when the provider sends one, else at the rate set for its currency here, past payments
        included; without either it counts in no report.
      </p>
      <Loaded state={state}>
        {({ rates, unconverted }) => (
          <>
            {unconverted.length > 0 && (
              <div class="notice pending rates-warning">
                <ul class="rates-unconverted">
                  {unconverted.map((row) => (
                    <li key={row.currency}>
                      <span>
                        {paymentsText(row)}
                        {editable ? ': set a rate.' : '.'}
                      </span>
                      {editable && (
                        <button type="button" class="button small" onClick={() => prefill(row.currency, '')}>
                          Set rate<span class="visually-hidden"> for {row.currency}</span>
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
                {!editable && <p class="small">An owner or a member of this website can set their rates.</p>}
              </div>
            )}
            {rates.length === 0 ? (
              <p class="muted">No exchange rate is set: only payments in {target}, or converted into it by their provider, count.</p>
            ) : (
              <DataTable label="Exchange rates" columns={['Currency', 'Rate', 'Updated']} actions={editable}>
                {rates.map((row) => (
                  <tr key={row.currency}>
                    <td>
                      <strong>{row.currency}</strong>
                      {currencyName(row.currency) && <span class="muted"> {currencyName(row.currency)}</span>}
                    </td>
                    <td>{rateText(row.currency, row.rate, target)}</td>
                    <td>{formatDateTime(row.updatedAt)}</td>
                    {editable && (
                      <td class="actions">
                        <ActionButton label="Edit" about={`the rate of ${row.currency}`} onClick={() => prefill(row.currency, String(row.rate))} />
                        <ActionButton label="Remove" about={`the rate of ${row.currency}`} danger onClick={() => removal.ask(row)} />
                      </td>
                    )}
                  </tr>
                ))}
              </DataTable>
            )}
          </>
        )}
      </Loaded>
      {editable && (
        <>
          <h3 class="subheading">Set a rate</h3>
          <form onSubmit={save} class="inline-form rates-form" aria-label="Set an exchange rate">
            <TextField
              id={codeId}
              fieldClass="narrow"
              label="Currency code"
              value={code}
              onValue={(value) => {
                setNotice(null);
                setCode(value.toUpperCase());
              }}
              list={listId}
              required
              maxLength={3}
              autocomplete="off"
              autocapitalize="characters"
              spellcheck={false}
              placeholder={example}
              hint="ISO 4217, such as EUR."
              error={codeError}
            />
            <datalist id={listId}>
              {suggestions.map((currency) => (
                <option key={currency} value={currency}>
                  {currencyName(currency) ?? currency}
                </option>
              ))}
            </datalist>
            <TextField
              id={rateId}
              fieldClass="narrow"
              label={`Rate, in ${target}`}
              type="number"
              inputMode="decimal"
              step="any"
              value={rate}
              onValue={(value) => {
                setNotice(null);
                setRate(value);
              }}
              required
              hint={hint}
              error={rateError}
            />
            <SubmitButton busy={busy} busyLabel="Saving…" label="Save rate" />
          </form>
          <ErrorMessage error={otherError} />
        </>
      )}
      <Notice>{notice}</Notice>
      {removal.dialog}
    </Card>
  );
}
