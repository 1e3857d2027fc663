// What became of an API provider's credential once connected: the provider's check of it (the
// account it belongs to) and the import of the payment history, as the background job reports.
import type { JSX } from 'preact';
import { formatDateTime, formatNumber } from '../../../components/index.ts';
import type { AccountState, HistoryState } from './providers.ts';

export function AccountLine({ account, providerName }: { account: AccountState; providerName: string }): JSX.Element {
  if (account.status === 'verifying') {
    return (
      <p class="small">
        Account: <span class="status status-queued">verifying…</span> <span class="muted">(waiting for {providerName} to answer the check of the key)</span>
      </p>
    );
  }
  if (account.status === 'failed') {
    return (
      <p class="small">
        Account: <span class="status status-failed">failed</span>
        {account.error && <span class="block">{account.error}</span>}
      </p>
    );
  }
  const details = [account.name, account.currency].filter(Boolean).join(', ');
  return (
    <p class="small">
      Account: <span class="status status-succeeded">verified</span> {details && <strong>{details}</strong>}
      {account.verifiedAt && <span class="muted"> ({formatDateTime(account.verifiedAt)})</span>}
    </p>
  );
}

export function HistoryLine({ history }: { history: HistoryState }): JSX.Element {
  const when = history.finishedAt ? `finished ${formatDateTime(history.finishedAt)}` : `asked ${formatDateTime(history.requestedAt)}`;
  return (
    <p class="small">
      Payment history: <span class={`status status-${history.status}`}>{history.status}</span> <span class="muted">({when})</span>
      <span class="block">
        {formatNumber(history.pages)} {history.pages === 1 ? 'page' : 'pages'}, {formatNumber(history.paymentsImported)}{' '}
        {history.paymentsImported === 1 ? 'payment' : 'payments'} imported, {formatNumber(history.attempts)}{' '}
        {history.attempts === 1 ? 'attempt' : 'attempts'}.
      </span>
      {history.error && <span class="block">{history.error}</span>}
    </p>
  );
}
