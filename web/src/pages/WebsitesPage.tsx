// The websites the account can see, each with its visitors of the last 30 days, the invitations
// waiting for the account, and a form to add a website (which then shows its tracking snippet).
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, request } from '../api.ts';
import { Card, CopyBox, ErrorMessage, Loaded, SelectField, Sparkline, SubmitButton, TextField, fieldErrors, formatNumber, useAsync, useSubmit } from '../components/index.ts';
import { Link } from '../router.tsx';
import { useTitle } from '../session.tsx';
import { type Website, type WebsiteSummary, browserTimeZone, currencyOptions, lastDays, timeZones, trackingSnippet } from '../types.ts';

interface TimeseriesPoint {
  timestamp: string;
  visitors?: number;
}

function VisitorsSparkline({ website }: { website: WebsiteSummary }): JSX.Element {
  const state = useAsync(async () => {
    const range = lastDays(website.timezone);
    const answer = await request<TimeseriesPoint>('GET', '/api/v1/analytics/timeseries', {
      query: { websiteId: website.id, fields: 'visitors', interval: 'day', ...range },
    });
    const values = answer.data.map((point) => point.visitors ?? 0);
    const totals = answer.totals as { visitors?: number } | undefined;
    return { values, total: totals?.visitors ?? values.reduce((sum, value) => sum + value, 0) };
  }, [website.id, website.timezone]);
  if (state.error) return <p class="muted small">Visitors unavailable</p>;
  if (!state.data) return <p class="muted small sparkline-placeholder">Loading visitors…</p>;
  const { values, total } = state.data;
  const visitors = total === 1 ? 'visitor' : 'visitors';
  const label = `${formatNumber(total)} ${visitors} in the last 30 days`;
  return (
    <div class="site-visitors">
      <p class="site-total" aria-hidden="true">
        <strong>{formatNumber(total)}</strong> {visitors} in the last 30 days
      </p>
      <Sparkline values={values} label={label} width={240} height={40} />
    </div>
  );
}

function WebsiteCard({ website }: { website: WebsiteSummary }): JSX.Element {
  const href = `/websites/${website.id}`;
  return (
    <li class="card site-card">
      <div class="site-head">
        <h2 class="site-name">
          <Link href={href}>{website.name || website.domain}</Link>
        </h2>
        {website.role !== 'owner' && <span class="badge">{website.role}</span>}
      </div>
      <p class="muted site-domain">{website.domain}</p>
      <VisitorsSparkline website={website} />
    </li>
  );
}

interface PendingInvitation {
  invitationId: string;
  websiteId: string;
  domain: string;
  role: string;
  invitedAt: string;
}

function Invitations({ onAccepted }: { onAccepted: () => void }): JSX.Element | null {
  const state = useAsync(() => api.list<PendingInvitation>('/api/v1/admin/invitations'), []);
  const { busy, error, run } = useSubmit();
  const [accepting, setAccepting] = useState<string | null>(null);
  if (!state.data?.length) return null;
  function accept(invitation: PendingInvitation) {
    setAccepting(invitation.invitationId);
    void run(async () => {
      await api.post(`/api/v1/admin/invitations/${invitation.invitationId}/accept`, {});
      state.reload();
      onAccepted();
    });
  }
  return (
    <Card title="Invitations for you">
      <ul class="plain-list">
        {state.data.map((invitation) => (
          <li key={invitation.invitationId} class="row-between">
            <span>
              <strong>{invitation.domain}</strong> as {invitation.role}
            </span>
            <button type="button" class="button small primary" disabled={busy} onClick={() => accept(invitation)}>
              {busy && accepting === invitation.invitationId ? 'Accepting…' : `Accept ${invitation.domain}`}
            </button>
          </li>
        ))}
      </ul>
      <ErrorMessage error={error} />
    </Card>
  );
}

function AddWebsite({ onAdded }: { onAdded: (website: Website) => void }): JSX.Element {
  const zones = useMemo(timeZones, []);
  const currencyList = useMemo(currencyOptions, []);
  const [domain, setDomain] = useState('');
  const [name, setName] = useState('');
  const [timezone, setTimezone] = useState(() => {
    const zone = browserTimeZone();
    return zones.includes(zone) ? zone : 'UTC';
  });
  const [currency, setCurrency] = useState('USD');
  const { busy, error, onSubmit } = useSubmit();
  const [created, setCreated] = useState<Website | null>(null);
  const fields = fieldErrors(error);

  const submit = onSubmit(async () => {
    // Whatever was typed, the server wants a bare host name.
    const host = domain.trim().replace(/^[a-z]+:\/\//i, '').replace(/[/?#].*$/, '');
    let website = await api.post<Website>('/api/v1/admin/websites', { domain: host, name: name.trim() || host, timezone });
    if (currency !== website.currency) website = await api.put<Website>(`/api/v1/admin/websites/${website.id}`, { currency });
    setCreated(website);
    setDomain('');
    setName('');
    onAdded(website);
  });

  return (
    <Card title="Add a website" id="add-website">
      {created && (
        <div class="created" role="status">
          <p>
            <strong>{created.domain}</strong> was added. Paste this snippet into the <code>&lt;head&gt;</code> of every page of the
            site:
          </p>
          <CopyBox text={trackingSnippet(created)} label={`Tracking snippet for ${created.domain}`} copyLabel="Copy snippet" />
          <p>
            <Link href={`/websites/${created.id}`}>Open its dashboard</Link> · <Link href={`/websites/${created.id}/settings`}>Settings</Link>
          </p>
        </div>
      )}
      <form onSubmit={submit} class="form-grid">
        <TextField
          label="Domain"
          value={domain}
          onValue={setDomain}
          placeholder="example.com"
          required
          maxLength={253}
          autocomplete="off"
          spellcheck={false}
          hint="The host name only: no https:// and no path."
          error={fields.domain}
        />
        <TextField label="Name" value={name} onValue={setName} placeholder="My site" maxLength={100} hint="Optional; the domain when left empty." error={fields.name} />
        <SelectField label="Time zone" value={timezone} onValue={setTimezone} options={zones} hint="Days and hours of the reports follow it." error={fields.timezone} />
        <SelectField label="Currency" value={currency} onValue={setCurrency} options={currencyList} hint="Revenue is reported in it." error={fields.currency} />
        <div class="form-actions">
          <SubmitButton busy={busy} busyLabel="Adding…" label="Add website" />
        </div>
      </form>
      <ErrorMessage error={Object.keys(fields).length ? null : error} />
    </Card>
  );
}

export function WebsitesPage(): JSX.Element {
  useTitle('Websites');
  const websites = useAsync(() => api.list<WebsiteSummary>('/api/v1/admin/websites'), []);
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    if (websites.data && websites.data.length === 0) setAdding(true);
  }, [websites.data]);

  return (
    <>
      <div class="page-head">
        <h1>Websites</h1>
        {!adding && (
          <button type="button" class="button primary" onClick={() => setAdding(true)}>
            Add website
          </button>
        )}
      </div>
      <Invitations onAccepted={websites.reload} />
      {adding && <AddWebsite onAdded={() => websites.reload()} />}
      <Loaded
        state={websites}
        loadingLabel="Loading websites…"
        empty={<p class="muted">No website yet: add the first one above, then paste its snippet into your pages.</p>}
      >
        {(list) => (
          <ul class="site-grid" aria-label="Your websites">
            {list.map((website) => (
              <WebsiteCard key={website.id} website={website} />
            ))}
          </ul>
        )}
      </Loaded>
    </>
  );
}
