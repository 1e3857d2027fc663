// Segments (issue 37 item 5): apply a saved set of filters, or save the current filters as one
// (personal, or shared with the team by an owner or member); and the Export link that downloads
// every report of the current period under the current filters as CSV files in a zip.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { ResolvedRange } from './range.ts';
import { readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import { DIMENSION_LABELS, type Dimension, type Filter, type UpdateView, filterQuery, parseFilterValue } from './view-state.ts';

interface Segment {
  id: string;
  name: string;
  filters: Record<string, string>;
  shared: boolean;
  canEdit: boolean;
}

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  canShare: boolean;
  onChange: UpdateView;
}

/** A segment's filters as the page's, dropping any dimension this dashboard does not know. */
function filtersOf(segment: Segment): Filter[] {
  return Object.entries(segment.filters).flatMap(([name, raw]) => {
    const dimension = name.replace(/^filter_/, '') as Dimension;
    const filter = dimension in DIMENSION_LABELS ? parseFilterValue(dimension, raw) : null;
    return filter ? [filter] : [];
  });
}

function exportHref(websiteId: string, resolved: ResolvedRange, filters: Filter[]): string {
  const range = resolved.range ?? resolved.chartRange;
  const query = readQuery(websiteId, range, filters, { interval: resolved.interval });
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return `/api/v1/analytics/export?${params.toString()}`;
}

export function SegmentBar({ websiteId, resolved, filters, canShare, onChange }: Props) {
  const [version, setVersion] = useState(0);
  const segments = useFetch(() => api.list<Segment>(`/api/v1/admin/websites/${websiteId}/segments`), `${websiteId}|${version}`);
  const [saving, setSaving] = useState(false);
  const [name, setName] = useState('');
  const [shared, setShared] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  // The segment last applied, offered for deletion when the caller may delete it.
  const [applied, setApplied] = useState<Segment | null>(null);

  async function save(event: Event) {
    event.preventDefault();
    try {
      const saved = await api.post<Segment>(`/api/v1/admin/websites/${websiteId}/segments`, { name, filters: filterQuery(filters), shared });
      setMessage(`Saved segment “${saved.name}”.`);
      setSaving(false);
      setName('');
      setShared(false);
      setVersion((n) => n + 1);
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  function apply(id: string) {
    const segment = segments.data?.find((s) => s.id === id);
    if (!segment) return;
    setApplied(segment);
    onChange({ filters: filtersOf(segment) });
  }

  async function remove(segment: Segment) {
    try {
      await api.delete(`/api/v1/admin/websites/${websiteId}/segments/${segment.id}`);
      setMessage(`Deleted segment “${segment.name}”.`);
      setApplied(null);
      setVersion((n) => n + 1);
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  return (
    <div class="an-filters an-segments" role="group" aria-label="Segments and export">
      {(segments.data?.length ?? 0) > 0 && (
        <label class="an-field an-inline">
          Segment
          <select value="" aria-label="Segment" onChange={(event) => apply((event.target as HTMLSelectElement).value)}>
            <option value="">Apply a segment…</option>
            {segments.data!.map((segment) => (
              <option key={segment.id} value={segment.id}>
                {segment.name}
                {segment.shared ? ' (team)' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      {applied?.canEdit && (
        <button type="button" class="an-link-button" onClick={() => remove(applied)}>
          Delete segment “{applied.name}”
        </button>
      )}
      {filters.length > 0 && !saving && (
        <button type="button" class="an-link-button" onClick={() => setSaving(true)}>
          Save filters as segment
        </button>
      )}
      {saving && (
        <form class="an-filters" onSubmit={save} aria-label="Save segment">
          <label class="an-field an-inline">
            Segment name
            <input value={name} required maxLength={100} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
          </label>
          {canShare && (
            <label class="an-field an-inline">
              <input type="checkbox" checked={shared} onChange={(event) => setShared((event.target as HTMLInputElement).checked)} />
              Share with the team
            </label>
          )}
          <button type="submit" class="an-button an-primary">
            Save segment
          </button>
          <button type="button" class="an-link-button" onClick={() => setSaving(false)}>
            Cancel
          </button>
        </form>
      )}
      {message && (
        <p class="an-hint" role="status">
          {message}
        </p>
      )}
      <a class="an-button an-export" href={exportHref(websiteId, resolved, filters)} download>
        Export CSV
      </a>
    </div>
  );
}
