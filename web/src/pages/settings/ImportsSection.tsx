// Imports of another tool's history (issue 37 item 1): upload Plausible's CSV export (the zip of
// imported_*.csv files), read an Umami database (UmamiImportForm.tsx) or upload Sightline's own
// export (NDJSON or its gzip, from another server), follow its background job (the list is read
// again every 1.5 s while an import is queued or running), read its report (files and rows read,
// kept and skipped, the days
// left to the website's own events), and delete an import, confirmed. A viewer sees the list only.
import type { JSX } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import { ActionButton, Card, DataTable, ErrorMessage, Loaded, Notice, SubmitButton, TextField, formatDateTime, formatNumber, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import type { Import } from '../../types.ts';
import type { SectionProps } from './section-props.ts';
import { UmamiImportForm } from './UmamiImportForm.tsx';

const POLL_MS = 1500;
const SKIP_REASONS: Record<string, string> = {
  native_day: 'on days with the website’s own events',
  invalid_date: 'with a bad date',
  invalid_number: 'with a bad number',
  too_long: 'with a value too long',
  already_present: 'already in this website',
  invalid_record: 'that could not be read',
  unknown_type: 'of a kind this version does not know',
  settings_kept: '(the website settings: this website had data of its own and keeps its settings)',
};

/** Sightline's own export: the NDJSON, or its gzip. */
const sightlineType = (file: File) => (/\.gz$/i.test(file.name) ? 'application/gzip' : 'application/x-ndjson');
const isSightline = (item: Import) => item.source === 'sightline-export';

function progressText(item: Import): string {
  if (item.status === 'done') return 'Done';
  if (item.status === 'failed') return 'Failed';
  if (isSightline(item)) return `${item.progress.percent}% (${formatNumber(item.progress.rowsRead)} of ${formatNumber(item.progress.rowsTotal ?? 0)} records)`;
  return `${item.progress.percent}% (${units(item)})`;
}

const running = (item: Import) => item.status === 'queued' || item.status === 'running';
const days = (item: Import) => (item.firstDay ? `${item.firstDay} to ${item.lastDay}` : '—');
/** How far a running import is: files of a zip, days of an Umami database. */
const units = (item: Import) =>
  item.source === 'umami' ? `${item.progress.daysDone} of ${item.progress.daysTotal} days` : `${item.progress.filesDone} of ${item.progress.filesTotal} files`;

function ImportReport({ item }: { item: Import }): JSX.Element {
  const skipped = Object.entries(item.report.skipped).filter(([, count]) => count > 0);
  const source = item.report.source;
  return (
    <details class="import-report">
      <summary>
        Report<span class="visually-hidden"> of {item.label}</span>
      </summary>
      {source && (
        <p>
          {formatNumber(source.eventsRead)} events read from the Umami website {source.websiteName} (<code>{source.database}</code>).
        </p>
      )}
      <ul>
        {item.report.files.map((file) => (
          <li key={file.name}>
            <code>{file.name}</code>: {formatNumber(file.rowsRead)} rows read, {formatNumber(file.rowsKept)} kept, {formatNumber(file.rowsSkipped)} skipped
          </li>
        ))}
      </ul>
      {skipped.map(([reason, count]) => (
        <p key={reason}>
          {formatNumber(count)} rows skipped {SKIP_REASONS[reason] ?? reason}.
        </p>
      ))}
      {item.report.nativeDays.length > 0 && <p>Days left to the website’s own events: {item.report.nativeDays.join(', ')}.</p>}
      {item.report.export?.settings === 'applied' && <p>The website took the exported settings (time zone, currency…).</p>}
      {item.report.ignoredFiles.length > 0 && <p>Not read (not an export table): {item.report.ignoredFiles.join(', ')}.</p>}
    </details>
  );
}

export function ImportsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/imports`;
  const state = useAsync(async () => (await request<Import>('GET', base)).data, [base]);
  const [file, setFile] = useState<File | null>(null);
  const [label, setLabel] = useState('');
  const [picker, setPicker] = useState(0);
  const { busy, error, notice, setNotice, onSubmit } = useSubmit();
  const fileId = useId();
  const own = useSubmit();
  const [ownFile, setOwnFile] = useState<File | null>(null);
  const ownFileId = useId();

  // While an import runs, its progress is read again until it ends.
  const anyRunning = state.data?.some(running) ?? false;
  useEffect(() => {
    if (!anyRunning) return;
    const timer = setTimeout(() => state.reload(), POLL_MS);
    return () => clearTimeout(timer);
  }, [anyRunning, state.data]);

  const upload = onSubmit(async () => {
    if (!file) throw new Error('Choose the zip Plausible exported.');
    const created = await api.upload<Import>(base, file, 'application/zip', label.trim() ? { label: label.trim() } : undefined);
    setFile(null);
    setLabel('');
    setPicker((count) => count + 1);
    state.reload();
    return `${file.name} is uploaded: the import runs in the background (import ${created.id}).`;
  });

  const uploadOwn = own.onSubmit(async () => {
    if (!ownFile) throw new Error('Choose the file Sightline exported (.ndjson or .ndjson.gz).');
    const created = await api.upload<Import>(base, ownFile, sightlineType(ownFile));
    setOwnFile(null);
    setPicker((count) => count + 1);
    state.reload();
    return `${ownFile.name} is uploaded: the import runs in the background (import ${created.id}).`;
  });

  const removal = useConfirm((item: Import) => ({
    title: `Delete the import “${item.label}”?`,
    message: 'Its data leaves every report at once. Import the zip again to have it back.',
    confirmLabel: 'Delete import',
    onConfirm: async () => {
      await api.delete(`${base}/${item.id}`);
      setNotice(`The import “${item.label}” is deleted.`);
      state.reload();
    },
  }));

  return (
    <Card title="Imports" id="imports">
      <p>
        Bring your history from Plausible (export it there: Site settings, Imports &amp; Exports, Export data, and upload the zip here) or
        from an Umami database. Its days are added to every report; days on which this website already has its own events keep only those,
        so nothing counts twice.
      </p>
      <Loaded state={state}>
        {(items) =>
          items.length === 0 ? (
            <p class="muted">No import yet.</p>
          ) : (
            <DataTable label="Imports" columns={['Import', 'Progress', 'Days', 'Rows', 'Report']} actions={editable}>
              {items.map((item) => (
                <tr key={item.id}>
                  <td>
                    <strong>{item.label}</strong>
                    <span class="muted small"> {formatDateTime(item.createdAt)}</span>
                  </td>
                  <td>
                    <progress max={100} value={item.progress.percent} aria-label={`Progress of ${item.label}`} />{' '}
                    <span class="import-status">{progressText(item)}</span>
                    {item.error && <p class="error small">{item.error}</p>}
                  </td>
                  <td>{days(item)}</td>
                  <td>
                    {formatNumber(item.progress.rowsKept)} kept, {formatNumber(item.progress.rowsSkipped)} skipped
                  </td>
                  <td>
                    <ImportReport item={item} />
                  </td>
                  {editable && (
                    <td class="actions">
                      <ActionButton label="Delete" about={`the import ${item.label}`} danger onClick={() => removal.ask(item)} />
                    </td>
                  )}
                </tr>
              ))}
            </DataTable>
          )
        }
      </Loaded>
      {editable ? (
        <>
          <h3 class="subheading">Import a Plausible export</h3>
          <form onSubmit={upload} class="inline-form import-form" aria-label="Import a Plausible export">
            <div class="field">
              <label for={fileId}>Plausible export (.zip)</label>
              <input
                key={picker}
                id={fileId}
                type="file"
                accept=".zip,application/zip"
                required
                onChange={(event) => {
                  setNotice(null);
                  setFile(event.currentTarget.files?.[0] ?? null);
                }}
              />
            </div>
            <TextField label="Label (optional)" value={label} onValue={setLabel} maxLength={200} placeholder="Plausible, old site" />
            <SubmitButton busy={busy} busyLabel="Uploading…" label="Import" />
          </form>
          <ErrorMessage error={error} />
          <UmamiImportForm
            base={base}
            onCreated={() => {
              setNotice(null);
              state.reload();
            }}
          />
          <h3 class="subheading">Import a Sightline export</h3>
          <p class="small">
            Moving from another Sightline server (or to another database): download the website’s raw export there (<code>sightline export</code> or
            the API’s raw export) and upload it here. Its events, payments, funnels, notes and profiles become this website’s own; a website with no
            data yet also takes its time zone and currency.
          </p>
          <form onSubmit={uploadOwn} class="inline-form import-form" aria-label="Import a Sightline export">
            <div class="field">
              <label for={ownFileId}>Sightline export (.ndjson or .ndjson.gz)</label>
              <input
                key={picker}
                id={ownFileId}
                type="file"
                accept=".ndjson,.gz,application/x-ndjson,application/gzip"
                required
                onChange={(event) => {
                  own.setNotice(null);
                  setOwnFile(event.currentTarget.files?.[0] ?? null);
                }}
              />
            </div>
            <SubmitButton busy={own.busy} busyLabel="Uploading…" label="Upload export" />
          </form>
          <ErrorMessage error={own.error} />
          <Notice>{own.notice}</Notice>
        </>
      ) : (
        <p class="small">An owner or a member of this website can import and delete imports.</p>
      )}
      <Notice>{notice}</Notice>
      {removal.dialog}
    </Card>
  );
}
