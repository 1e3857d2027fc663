import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import {
  Card,
  CheckboxField,
  CopyBox,
  ErrorMessage,
  SelectField,
  SubmitButton,
  TextAreaField,
  TextField,
  fieldErrors,
  formatDateTime,
  formatPercent,
  useAsync,
  useSubmit,
} from '../../components/index.ts';
import { type DerivedData, type Website, currencyOptions, timeZones, trackingSnippet } from '../../types.ts';
import type { SectionProps } from './section-props.ts';

const COLOR_SCHEMES = ['red', 'orange', 'yellow', 'green', 'purple', 'pink', 'gray', 'blue', 'teal', 'indigo'];
const LIST_FIELDS = ['allowedHostnames', 'excludedHostnames', 'excludedIps', 'excludedPaths', 'excludedCountries'] as const;
type ListField = (typeof LIST_FIELDS)[number];

interface Form {
  domain: string;
  name: string;
  timezone: string;
  currency: string;
  kpi: string;
  kpiColorScheme: string;
  revenueMetric: string;
  isCookieless: boolean;
  includeRenewalRevenue: boolean;
  allowedHostnames: string;
  excludedHostnames: string;
  excludedIps: string;
  excludedPaths: string;
  excludedCountries: string;
}

function toForm(website: Website): Form {
  return {
    domain: website.domain,
    name: website.name,
    timezone: website.timezone,
    currency: website.currency,
    kpi: website.kpi ?? '',
    kpiColorScheme: website.kpiColorScheme ?? '',
    revenueMetric: website.revenueMetric,
    isCookieless: website.isCookieless,
    includeRenewalRevenue: website.includeRenewalRevenue,
    allowedHostnames: website.allowedHostnames.join('\n'),
    excludedHostnames: website.excludedHostnames.join('\n'),
    excludedIps: website.excludedIps.join('\n'),
    excludedPaths: website.excludedPaths.join('\n'),
    excludedCountries: website.excludedCountries.join('\n'),
  };
}

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean);

/** Only what changed: PUT is partial, and an untouched field cannot fail validation. */
function changes(website: Website, form: Form): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const scalar = (key: 'domain' | 'name' | 'timezone' | 'currency' | 'revenueMetric', value: string) => {
    if (value.trim() !== website[key]) body[key] = value.trim();
  };
  scalar('domain', form.domain);
  scalar('name', form.name);
  scalar('timezone', form.timezone);
  scalar('currency', form.currency.toUpperCase());
  scalar('revenueMetric', form.revenueMetric);
  if ((form.kpi || null) !== website.kpi) body.kpi = form.kpi || null;
  if ((form.kpiColorScheme || null) !== website.kpiColorScheme) body.kpiColorScheme = form.kpiColorScheme || null;
  if (form.isCookieless !== website.isCookieless) body.isCookieless = form.isCookieless;
  if (form.includeRenewalRevenue !== website.includeRenewalRevenue) body.includeRenewalRevenue = form.includeRenewalRevenue;
  for (const key of LIST_FIELDS) {
    const list = key === 'excludedCountries' ? lines(form[key]).map((code) => code.toUpperCase()) : lines(form[key]);
    if (JSON.stringify(list) !== JSON.stringify(website[key])) body[key] = list;
  }
  return body;
}

/** 400 details name `excludedIps[3]`: shown on the field, saying which line. */
function listErrors(error: unknown): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [path, message] of Object.entries(fieldErrors(error))) {
    const match = /^(\w+)(?:\[(\d+)\])?/.exec(path);
    if (!match) continue;
    const [, field, index] = match;
    if (!errors[field!]) errors[field!] = index === undefined ? message : `Line ${Number(index) + 1}: ${message}`;
  }
  return errors;
}

interface TrackedGoal {
  goalName: string;
}

const REBUILD_POLL_MS = 3_000;

/**
 * The rebuild of the website's statistics after a change of time zone, or the builds of funnels
 * just created, while one runs (null otherwise): read when the section opens and, while it answers
 * rebuilding or funnel builds, every 3 s until it answers ready with none. A change of `watch` (a save that changed the zone) reads again, and keeps
 * polling through failed reads until an answer comes.
 */
function useRebuild(websiteId: string, watch: number): DerivedData | null {
  const [rebuild, setRebuild] = useState<DerivedData | null>(null);
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let rebuilding = watch > 0;
    async function read() {
      try {
        const answer = await api.get<DerivedData>(`/api/v1/admin/websites/${websiteId}/derived-data`);
        if (!alive) return;
        rebuilding = answer.state === 'rebuilding' || answer.funnelBuilds.length > 0;
        setRebuild(rebuilding ? answer : null);
      } catch (error) {
        // A refusal will not change by asking again; a failed request may.
        if (!alive || (error instanceof ApiError && error.status < 500)) return;
      }
      if (alive && rebuilding) timer = setTimeout(read, REBUILD_POLL_MS);
    }
    void read();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [websiteId, watch]);
  return rebuild;
}

/** "Rebuilding statistics for the new time zone (Asia/Tokyo): 42% — ...", or nothing once ready. */
function rebuildLine(rebuild: DerivedData | null): string | null {
  if (!rebuild) return null;
  if (rebuild.state === 'ready') {
    // Only funnels build: the oldest's progress (the worker builds them one at a time).
    const first = rebuild.funnelBuilds[0]!;
    const share = first.progress === null ? '' : `: ${formatPercent(Math.floor(first.progress * 100))}`;
    const count = rebuild.funnelBuilds.length === 1 ? 'a new funnel' : `${rebuild.funnelBuilds.length} new funnels`;
    return `Preparing the reports of ${count}${share} — their reports read the raw events meanwhile and may be slower.`;
  }
  const done = rebuild.progress === null ? '' : `: ${formatPercent(Math.floor(rebuild.progress * 100))}`;
  const meanwhile = 'reports read the raw events meanwhile and may be slower.';
  if (rebuild.reason === 'build') return `Building statistics from the raw events${done} — ${meanwhile}`;
  // A change saved during the rebuild is moved to next: the zone the statistics end up in.
  const zone = rebuild.nextTimezone ?? rebuild.toTimezone;
  return `Rebuilding statistics for the new time zone (${zone})${done} — ${meanwhile}`;
}

export function GeneralSection({ website, editable, onChange }: SectionProps): JSX.Element {
  const [form, setForm] = useState(() => toForm(website));
  const { busy, error, setError, notice: saved, setNotice: setSaved, run } = useSubmit();
  const zones = useMemo(() => {
    const all = timeZones();
    return all.includes(website.timezone) ? all : [website.timezone, ...all];
  }, [website.timezone]);
  const currencyList = useMemo(currencyOptions, []);
  const goals = useAsync(() => api.list<TrackedGoal>(`/api/v1/admin/websites/${website.id}/goals`), [website.id]);
  const errors = listErrors(error);
  // Bumped by a save that changed the time zone: the rebuild it started is followed from then on.
  const [zoneSaves, setZoneSaves] = useState(0);
  const rebuild = useRebuild(website.id, zoneSaves);

  useEffect(() => setForm(toForm(website)), [website]);

  // After a refused save, the first field at fault takes the focus (its message is tied to it).
  useEffect(() => {
    if (Object.keys(errors).length) document.querySelector<HTMLElement>('.settings [aria-invalid="true"]')?.focus();
  }, [error]);

  const set = <K extends keyof Form>(key: K) => (value: Form[K]) => {
    setSaved(null);
    setForm((current) => ({ ...current, [key]: value }));
  };

  const kpiOptions: Array<[string, string]> = [['', 'None'], ...(goals.data ?? []).map((goal): [string, string] => [goal.goalName, goal.goalName])];
  if (website.kpi && !kpiOptions.some(([value]) => value === website.kpi)) kpiOptions.push([website.kpi, website.kpi]);

  function submit(event: Event) {
    event.preventDefault();
    const body = changes(website, form);
    if (!Object.keys(body).length) {
      setError(null);
      setSaved('Nothing to save: no field changed.');
      return;
    }
    void run(async () => {
      const updated = await api.put<Website>(`/api/v1/admin/websites/${website.id}`, body);
      onChange(updated);
      if (body.timezone !== undefined) setZoneSaves((count) => count + 1);
      return 'Settings saved.';
    });
  }

  const listField = (key: ListField, label: string, hint: string) => (
    <TextAreaField label={label} value={form[key]} onValue={set(key)} hint={hint} error={errors[key]} rows={3} spellcheck={false} />
  );

  return (
    <>
      <Card title="Tracking snippet">
        <p>Paste it into the <code>&lt;head&gt;</code> of every page of {website.domain}.</p>
        <CopyBox text={trackingSnippet(website)} label={`Tracking snippet for ${website.domain}`} copyLabel="Copy snippet" />
        <p class="muted small">
          Tracking id <code>{website.trackingId}</code> · added {formatDateTime(website.createdAt)}
        </p>
      </Card>
      <form onSubmit={submit}>
        <fieldset disabled={!editable} class="plain-fieldset">
          <Card title="Website">
            <div class="form-grid">
              <TextField label="Domain" value={form.domain} onValue={set('domain')} required maxLength={253} spellcheck={false} error={errors.domain} />
              <TextField label="Name" value={form.name} onValue={set('name')} required maxLength={100} error={errors.name} />
              <SelectField label="Time zone" value={form.timezone} onValue={set('timezone')} options={zones} error={errors.timezone} />
              <SelectField label="Currency" value={form.currency} onValue={set('currency')} options={currencyList} error={errors.currency} />
            </div>
            <p class="notice pending" role="status">
              {rebuildLine(rebuild)}
            </p>
          </Card>
          <Card title="Reports">
            <div class="form-grid">
              <SelectField
                label="Key goal (KPI)"
                value={form.kpi}
                onValue={set('kpi')}
                options={kpiOptions}
                hint={goals.data && !goals.data.length ? 'No goal has been tracked yet.' : 'A goal this website has tracked.'}
                error={errors.kpi}
              />
              <SelectField
                label="KPI colour"
                value={form.kpiColorScheme}
                onValue={set('kpiColorScheme')}
                options={[['', 'Default'], ...COLOR_SCHEMES.map((scheme): [string, string] => [scheme, scheme[0]!.toUpperCase() + scheme.slice(1)])]}
                error={errors.kpiColorScheme}
              />
              <SelectField
                label="Revenue metric"
                value={form.revenueMetric}
                onValue={set('revenueMetric')}
                options={[
                  ['revenue', 'Revenue'],
                  ['mrr', 'Monthly recurring revenue (MRR)'],
                ]}
                error={errors.revenueMetric}
              />
            </div>
            <CheckboxField
              label="Count renewal payments in revenue"
              checked={form.includeRenewalRevenue}
              onChecked={set('includeRenewalRevenue')}
              error={errors.includeRenewalRevenue}
            />
          </Card>
          <Card title="Privacy and filtering">
            <CheckboxField
              label="Cookieless tracking"
              checked={form.isCookieless}
              onChecked={set('isCookieless')}
              hint="Visitors are recognised by a daily-rotating hash instead of a stored id."
              error={errors.isCookieless}
            />
            <div class="form-grid">
              {listField('allowedHostnames', 'Also accept these host names', 'One per line; *.example.com allowed.')}
              {listField('excludedHostnames', 'Ignore these host names', 'One per line; *.example.com allowed.')}
              {listField('excludedIps', 'Ignore these IP addresses', 'One address or CIDR range per line.')}
              {listField('excludedPaths', 'Ignore these paths', 'One per line, starting with /; * is a wildcard.')}
              {listField('excludedCountries', 'Ignore these countries', 'Two-letter ISO codes, one per line (e.g. FR).')}
            </div>
          </Card>
        </fieldset>
        {editable && (
          <div class="sticky-actions">
            <ErrorMessage error={Object.keys(errors).length ? 'Some fields need attention (see the messages above).' : error} />
            <p class="notice" role="status">
              {saved}
            </p>
            <SubmitButton busy={busy} busyLabel="Saving…" label="Save settings" />
          </div>
        )}
      </form>
    </>
  );
}
