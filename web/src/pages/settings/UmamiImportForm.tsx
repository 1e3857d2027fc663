// The Imports tab's second source (issue 37 item 1): an Umami database read directly. The owner
// gives the database's PostgreSQL URL (a password field: it carries one, and the server keeps it
// encrypted until the import ends and never shows it again), lists its websites, picks the one
// that is this website, and starts the import; its progress then shows in the imports' table.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, list } from '../../api.ts';
import { ErrorMessage, SelectField, SubmitButton, TextField, fieldErrors, formatNumber, useSubmit } from '../../components/index.ts';
import type { Import } from '../../types.ts';

interface UmamiWebsite {
  id: string;
  name: string;
  domain: string | null;
  events: number;
  firstEventAt: string | null;
  lastEventAt: string | null;
}

const optionLabel = (site: UmamiWebsite) =>
  `${site.name}${site.domain ? ` (${site.domain})` : ''}: ${formatNumber(site.events)} events${site.firstEventAt ? `, ${site.firstEventAt.slice(0, 10)} to ${site.lastEventAt!.slice(0, 10)}` : ''}`;

export function UmamiImportForm({ base, onCreated }: { base: string; onCreated(created: Import): void }): JSX.Element {
  const [databaseUrl, setDatabaseUrl] = useState('');
  const [websites, setWebsites] = useState<UmamiWebsite[] | null>(null);
  const [chosen, setChosen] = useState('');
  const listing = useSubmit();
  const starting = useSubmit();
  const errors = { ...fieldErrors(listing.error), ...fieldErrors(starting.error) };

  const listWebsites = listing.onSubmit(async () => {
    const found = await list<UmamiWebsite>('POST', `${base}/umami/websites`, { body: { databaseUrl: databaseUrl.trim() } });
    setWebsites(found);
    setChosen(found.find((site) => site.events > 0)?.id ?? found[0]?.id ?? '');
    return found.length === 0 ? 'The Umami database has no website.' : `The Umami database has ${found.length} website${found.length === 1 ? '' : 's'}: choose the one to bring here.`;
  });

  const start = starting.onSubmit(async () => {
    const created = await api.post<Import>(`${base}/umami`, { databaseUrl: databaseUrl.trim(), umamiWebsiteId: chosen });
    setDatabaseUrl('');
    setWebsites(null);
    listing.setNotice(null);
    onCreated(created);
    return `The import of ${created.report.source?.websiteName ?? 'the Umami website'} runs in the background (import ${created.id}).`;
  });

  return (
    <>
      <h3 class="subheading">Import from an Umami database</h3>
      <p class="small">
        Sightline reads Umami’s PostgreSQL database directly, read-only, one Umami website into this one. The server connects only to the
        hosts its operator allows (<code>IMPORT_UMAMI_HOSTS</code>, by default this machine).
      </p>
      <form onSubmit={listWebsites} class="inline-form import-form" aria-label="Connect to an Umami database">
        <TextField
          label="Umami database URL"
          type="password"
          autoComplete="off"
          required
          maxLength={2048}
          placeholder="postgres://umami:password@127.0.0.1:5432/umami"
          value={databaseUrl}
          onValue={(value) => {
            setDatabaseUrl(value);
            setWebsites(null);
          }}
          error={errors.databaseUrl}
        />
        <SubmitButton busy={listing.busy} busyLabel="Connecting…" label="List its websites" />
      </form>
      {!errors.databaseUrl && <ErrorMessage error={listing.error} />}
      {listing.notice && <p class="small" role="status">{listing.notice}</p>}
      {websites && websites.length > 0 && (
        <form onSubmit={start} class="inline-form import-form" aria-label="Choose the Umami website">
          <SelectField label="Umami website" value={chosen} onValue={setChosen} options={websites.map((site) => [site.id, optionLabel(site)] as [string, string])} error={errors.umamiWebsiteId} />
          <SubmitButton busy={starting.busy} busyLabel="Starting…" label="Import from Umami" />
        </form>
      )}
      {!errors.umamiWebsiteId && !errors.databaseUrl && <ErrorMessage error={starting.error} />}
      {starting.notice && <p class="small" role="status">{starting.notice}</p>}
    </>
  );
}
