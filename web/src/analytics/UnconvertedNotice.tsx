// A line under the overview when payments in some currency count in no report (no exchange rate
// set for it, issue 35 item 3): "Payments in GBP are not counted: set a rate in Settings", linking
// to the Currencies card. Only for a caller who may read the settings: the role the page was given
// says so, and a refused read (403, or any failure) shows nothing, as there is nothing to act on.
import { isSharedDashboard, request } from '../api.ts';
import { Link } from '../router.tsx';
import { type Role, canEdit, canReadSettings } from '../types.ts';
import { useFetch } from './use-fetch.ts';

interface Unconverted {
  currency: string;
  payments: number;
  amount: number;
}

/** "GBP", "EUR and GBP", "EUR, GBP and JPY". */
function names(codes: string[]): string {
  try {
    return new Intl.ListFormat('en', { style: 'long', type: 'conjunction' }).format(codes);
  } catch {
    return codes.join(', ');
  }
}

export function UnconvertedNotice({ websiteId, role }: { websiteId: string; role?: Role }) {
  // A role the page was not told (undefined) reads, and a refusal hides the line.
  const allowed = !isSharedDashboard() && (role === undefined || canReadSettings(role));
  const { data } = useFetch(
    allowed
      ? () =>
          request<unknown>('GET', `/api/v1/admin/websites/${encodeURIComponent(websiteId)}/currency-rates`).then(
            (answer) => (answer.unconverted as Unconverted[] | undefined) ?? [],
          )
      : null,
    websiteId,
  );
  if (!data?.length) return null;
  const codes = data.map((row) => row.currency);
  const editable = canEdit(role);
  return (
    <p class="an-hint an-rates-note">
      Payments in {names(codes)} are not counted in revenue:{' '}
      <Link href={`/websites/${encodeURIComponent(websiteId)}/settings#currencies`}>
        {editable ? 'set a rate in Settings' : 'see Settings (an owner or a member sets the rates)'}
      </Link>
      .
    </p>
  );
}
