// The chart of the selected metric over the range (uPlot), with the website's notes drawn as
// markers and listed below. Buckets are in the website's time zone (contract.md section 5).
// "Compare" adds a dashed line: the same metric over the previous period or the year before,
// bucket by bucket. Whoever may write notes adds one with a click on the chart (or the "Add
// note" button) and changes one from its marker or from the list.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api, request } from '../api.ts';
import { type Note, COUNT_STEPS, bucketLabel, noteBucket, tickLabels, valueText } from './chart-helpers.ts';
import { ChartNotes } from './ChartNotes.tsx';
import { formatInstant } from './format.ts';
import { lineColor, useGoals } from './goal-display.tsx';
import { METRIC_LABELS } from './OverviewCards.tsx';
import { NoteDialog } from './NoteDialog.tsx';
import { type DayRange, type ResolvedRange, comparisonRange, dayIn, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import { COMPARISONS, type ChartMetric, type Comparison, type Filter } from './view-state.ts';

interface Bucket {
  name: string;
  timestamp: string;
  visitors?: number;
  sessions?: number;
  pageviews?: number;
  revenue?: number;
  conversion_rate?: number;
}

interface Series {
  totals: Partial<Record<ChartMetric, number>>;
  currency?: string;
  data: Bucket[];
}

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  metric: ChartMetric;
  timeZone: string;
  currency: string;
  /** The range is not known yet (the first day of "All time" is being looked up). */
  pending?: boolean;
  compare: Comparison;
  onCompare: (compare: Comparison) => void;
  /** Whether the signed-in account may write notes (owners and members; not viewers). */
  canWriteNotes: boolean;
}

const FIELDS = 'visitors,sessions,pageviews,revenue,conversion_rate';

async function fetchSeries(query: Record<string, string | number | undefined>): Promise<Series> {
  return (await request<Bucket>('GET', '/api/v1/analytics/timeseries', { query })) as unknown as Series;
}

function comparisonLabel(compare: Comparison, range: DayRange | null): string {
  const name = COMPARISONS.find((option) => option.value === compare)?.label ?? '';
  return range ? `${name} (${range.startAt} – ${range.endAt})` : name;
}

const HEIGHT = 280;
// The light theme's colours, used when the page's CSS variables cannot be read.
const COLOR = '#4338ca';
const NOTE_COLOR = '#b45309';
const AXIS_COLOR = '#4b5563';
const GRID_COLOR = '#e5e7eb';
const CARD_COLOR = '#ffffff';

const DARK = '(prefers-color-scheme: dark)';

/** Whether the system asks for the dark theme, following its changes (the chart is redrawn). */
function useDarkScheme(): boolean {
  const query = typeof matchMedia === 'function' ? matchMedia(DARK) : null;
  const [dark, setDark] = useState(query?.matches ?? false);
  useEffect(() => {
    if (!query) return;
    const changed = () => setDark(query.matches);
    query.addEventListener('change', changed);
    changed();
    return () => query.removeEventListener('change', changed);
  }, []);
  return dark;
}

/** The chart's colours, read from the page's CSS variables (analytics.css) at draw time. */
function chartColors(element: Element) {
  const style = getComputedStyle(element);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    accent: read('--an-accent', COLOR),
    note: read('--an-note', NOTE_COLOR),
    axis: read('--an-muted', AXIS_COLOR),
    grid: read('--an-grid', GRID_COLOR),
    card: read('--an-card', CARD_COLOR),
  };
}

export function TimeSeriesChart(props: Props) {
  const { websiteId, resolved, filters, metric, timeZone, currency, pending, compare, onCompare, canWriteNotes } = props;
  const ids = useId();
  const query = readQuery(websiteId, resolved.chartRange, filters, { fields: FIELDS, interval: resolved.interval });
  const series = useFetch(pending ? null : () => fetchSeries(query), queryKey(query));
  const shifted = comparisonRange(resolved, compare);
  const compareQuery = shifted ? readQuery(websiteId, shifted, filters, { fields: FIELDS, interval: resolved.interval }) : null;
  const earlier = useFetch(pending || !compareQuery ? null : () => fetchSeries(compareQuery), compareQuery ? queryKey(compareQuery) : 'none');
  const compared = compareQuery && earlier.data ? earlier.data : null;
  // The note being written: a new one's day (or hour), or a note being changed.
  const [noteEditing, setNoteEditing] = useState<{ note: Note | null; at: string } | null>(null);
  const noteQuery = { ...resolved.chartRange, limit: 200 };
  const notes = useFetch(
    pending ? null : () => api.list<Note>(`/api/v1/admin/websites/${encodeURIComponent(websiteId)}/notes`, noteQuery),
    `${websiteId}|${queryKey(noteQuery)}`,
  );
  const box = useRef<HTMLDivElement>(null);
  // Filtered on one goal, the line takes that goal's colour (another shade of it when too close to
  // the card's colour: darker on white, lighter in the dark theme).
  const goals = useGoals();
  const goalFilter = filters.find((filter) => filter.dimension === 'goal');
  const onlyGoal = goalFilter?.operator === 'is' && goalFilter.values.length === 1 ? goalFilter.values[0]! : null;
  const goalColor = (onlyGoal && goals.look(onlyGoal)?.color) || null;
  const dark = useDarkScheme();
  const money = series.data?.currency ?? currency;
  const buckets = series.data?.data ?? [];
  const noteList = notes.data ?? [];

  const nowSeconds = Date.now() / 1000;
  const xs = buckets.map((bucket) => Date.parse(bucket.timestamp) / 1000);
  // Buckets that have not started yet (the rest of today) are left out of the line.
  const ys = buckets.map((bucket, index) => (xs[index]! > nowSeconds ? null : (bucket[metric] ?? 0)));
  // The earlier buckets drawn over the current ones, first on first (a shorter month leaves a gap).
  const earlierBuckets = compared?.data ?? [];
  const earlierYs = xs.map((_x, index) => {
    const bucket = earlierBuckets[index];
    return bucket ? (bucket[metric] ?? 0) : null;
  });
  // Where a click on the chart puts a new note: the bucket's day, or its hour on an hourly chart.
  const noteAt = (index: number): string | null => {
    const bucket = buckets[index];
    if (!bucket) return null;
    return resolved.interval === 'hour' ? bucket.timestamp : dayIn(timeZone, bucket.timestamp);
  };
  const picks = useRef<{ add: (index: number) => void; edit: (note: Note) => void } | null>(null);
  picks.current = canWriteNotes
    ? {
        add: (index) => {
          const at = noteAt(index);
          if (at) setNoteEditing({ note: null, at });
        },
        edit: (note) => setNoteEditing({ note, at: note.timestamp }),
      }
    : null;

  useEffect(() => {
    const element = box.current;
    if (!element || xs.length === 0) return;
    const counting = metric !== 'revenue' && metric !== 'conversion_rate';
    const marks = noteList.map((note) => ({ note, x: noteBucket(xs, note) })).filter((mark) => mark.x !== null);
    const colors = chartColors(element);
    const stroke = lineColor(goals, goalColor, colors.card) || colors.accent;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: HEIGHT,
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timeZone),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : counting ? 5 : 1] } },
      series: [
        {
          label: resolved.interval === 'hour' ? 'Time' : 'Date',
          value: (_u, seconds) => (seconds === null ? '' : bucketLabel(seconds, resolved.interval, timeZone)),
        },
        {
          label: METRIC_LABELS[metric],
          stroke,
          width: 2,
          fill: stroke === COLOR ? 'rgba(67, 56, 202, 0.1)' : /^#[0-9a-f]{6}$/i.test(stroke) ? `${stroke}1a` : undefined,
          points: { show: xs.length <= 40, size: 5 },
          value: (_u, value) => valueText(metric, value, money),
        },
        ...(compared
          ? [
              {
                label: comparisonLabel(compare, shifted),
                stroke: colors.axis,
                width: 1.5,
                dash: [6, 4],
                points: { show: false },
                value: (_u: uPlot, value: number | null) => valueText(metric, value, money),
              },
            ]
          : []),
      ],
      axes: [
        {
          stroke: colors.axis,
          grid: { stroke: colors.grid, width: 1 },
          ticks: { stroke: colors.grid, width: 1 },
          // Ticks on bucket starts only, as many as fit (a label needs about 70 px).
          splits: (u) => {
            const fit = Math.max(2, Math.floor(u.bbox.width / uPlot.pxRatio / 70));
            const step = Math.ceil(xs.length / fit);
            return xs.filter((_x, index) => index % step === 0);
          },
          values: (_u, splits) => {
            const labels = tickLabels(splits, resolved.interval, timeZone);
            // The axis is drawn on a canvas: its labels are kept on the element for tests to read.
            element.dataset.ticks = labels.join('|');
            return labels;
          },
        },
        {
          stroke: colors.axis,
          size: 64,
          grid: { stroke: colors.grid, width: 1 },
          ticks: { show: false },
          incrs: counting ? COUNT_STEPS : undefined,
          values: (_u, values) => values.map((value) => valueText(metric, value, money)),
        },
      ],
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      legend: { live: true },
      hooks: {
        draw: [
          (u) => {
            const { ctx, bbox } = u;
            ctx.save();
            ctx.strokeStyle = colors.note;
            ctx.fillStyle = colors.note;
            ctx.lineWidth = Math.max(1, uPlot.pxRatio);
            ctx.setLineDash([4 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
            for (const mark of marks) {
              const x = Math.round(u.valToPos(mark.x!, 'x', true));
              ctx.beginPath();
              ctx.moveTo(x, bbox.top);
              ctx.lineTo(x, bbox.top + bbox.height);
              ctx.stroke();
              ctx.beginPath();
              ctx.arc(x, bbox.top + 4 * uPlot.pxRatio, 4 * uPlot.pxRatio, 0, 2 * Math.PI);
              ctx.fill();
            }
            ctx.restore();
            // Hover targets carrying each note's text as a tooltip.
            for (const old of u.over.querySelectorAll('.an-note-marker')) old.remove();
            // Hidden from assistive technology: the list under the chart names each note (and
            // carries its "Edit" button).
            for (const mark of marks) {
              const marker = document.createElement('div');
              marker.className = picks.current ? 'an-note-marker an-note-editable' : 'an-note-marker';
              marker.style.left = `${u.valToPos(mark.x!, 'x')}px`;
              marker.title = `${formatInstant(mark.note.timestamp, timeZone)}: ${mark.note.text}${picks.current ? ' (click to edit)' : ''}`;
              marker.dataset.noteId = mark.note.id;
              marker.setAttribute('aria-hidden', 'true');
              u.over.appendChild(marker);
            }
          },
        ],
      },
    };
    const plot = new uPlot(options, (compared ? [xs, ys, earlierYs] : [xs, ys]) as uPlot.AlignedData, element);
    // A click on a note's marker edits it; anywhere else on the plot adds a note on that bucket.
    const clicked = (event: MouseEvent) => {
      const pick = picks.current;
      if (!pick) return;
      const noteId = (event.target as HTMLElement).closest<HTMLElement>('.an-note-marker')?.dataset.noteId;
      const note = noteId ? noteList.find((candidate) => candidate.id === noteId) : undefined;
      if (note) return pick.edit(note);
      const index = plot.cursor.idx;
      if (index !== null && index !== undefined) pick.add(index);
    };
    plot.over.addEventListener('click', clicked);
    if (canWriteNotes) plot.over.classList.add('an-chart-writable');
    const observer = new ResizeObserver(() => {
      const width = Math.max(element.clientWidth, 200);
      if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [series.data, notes.data, compared, metric, timeZone, goalColor, goals, dark, canWriteNotes]);

  const total = series.data?.totals?.[metric];
  let peakIndex = -1;
  ys.forEach((value, index) => {
    if (value !== null && (peakIndex < 0 || value > (ys[peakIndex] ?? 0))) peakIndex = index;
  });
  const peak = peakIndex >= 0 ? ys[peakIndex] : null;
  const label = series.data
    ? `${METRIC_LABELS[metric]}, ${resolved.label.toLowerCase()}, by ${resolved.interval}: ` +
      `${metric === 'conversion_rate' ? 'overall' : 'total'} ${valueText(metric, total, money)}` +
      (peak !== null && peak !== undefined && peak > 0
        ? `, peak ${valueText(metric, peak, money)} (${bucketLabel(xs[peakIndex]!, resolved.interval, timeZone)})`
        : '') +
      (compared ? `; dashed: ${comparisonLabel(compare, shifted).toLowerCase()}, ${metric === 'conversion_rate' ? 'overall' : 'total'} ${valueText(metric, compared.totals?.[metric], money)}` : '') +
      (noteList.length ? `; ${noteList.length} note${noteList.length === 1 ? '' : 's'} marked, listed below` : '')
    : `${METRIC_LABELS[metric]} chart, loading`;

  return (
    <section class="an-card an-chart-card" aria-label={`${METRIC_LABELS[metric]} over time`} aria-busy={series.loading || pending}>
      <div class="an-chart-tools">
        <label class="an-field an-inline">
          Compare
          <select id={`${ids}-compare`} value={compare} onChange={(event) => onCompare(event.currentTarget.value as Comparison)}>
            {COMPARISONS.map((option) => (
              <option key={option.value} value={option.value} disabled={option.value === 'previous' && !resolved.range}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        {canWriteNotes && (
          <button
            type="button"
            class="an-button an-filter-button"
            aria-haspopup="dialog"
            title="Or click the chart on a day"
            onClick={() => setNoteEditing({ note: null, at: resolved.chartRange.endAt })}
          >
            <span aria-hidden="true">+ </span>Add note
          </button>
        )}
      </div>
      {earlier.error && <p class="an-hint">The comparison could not be loaded: {earlier.error.message}</p>}
      {series.error && (
        <p class="an-error" role="alert">
          Could not load the chart: {series.error.message}
        </p>
      )}
      <div class={`an-chart${series.loading || pending ? ' an-loading' : ''}`} style={{ minHeight: `${HEIGHT + 40}px` }}>
        <div ref={box} role="img" aria-label={label} class="an-chart-canvas" />
        {series.data && !series.loading && ys.every((value) => !value) && (
          <p class="an-chart-empty" aria-hidden="true">
            No data yet
          </p>
        )}
      </div>
      <ChartNotes notes={noteList} timeZone={timeZone} onEdit={canWriteNotes ? (note) => setNoteEditing({ note, at: note.timestamp }) : null} />
      {notes.error && <p class="an-hint">Notes could not be loaded: {notes.error.message}</p>}
      {noteEditing && (
        <NoteDialog
          websiteId={websiteId}
          timeZone={timeZone}
          note={noteEditing.note}
          at={noteEditing.at}
          onSaved={notes.reload}
          onClose={() => setNoteEditing(null)}
        />
      )}
    </section>
  );
}
