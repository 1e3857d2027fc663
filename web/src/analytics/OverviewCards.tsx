// The top numbers, each compared with the previous period of the same length. The cards of the
// metrics the time series has are buttons: the selected one is charted (as Plausible does).
import { api } from '../api.ts';
import { formatDuration, formatExact, formatMoney, formatNumber, formatPercent } from './format.ts';
import { type ResolvedRange, queryKey, readQuery } from './range.ts';
import { useFetch } from './use-fetch.ts';
import type { ChartMetric, Filter } from './view-state.ts';

export interface Overview {
  visitors: number;
  sessions: number;
  pageviews: number;
  bounce_rate: number;
  avg_session_duration: number;
  currency: string;
  revenue: number;
  payments: number;
  revenue_per_visitor: number;
  conversion_rate: number;
}

type Key = 'visitors' | 'sessions' | 'pageviews' | 'bounce_rate' | 'avg_session_duration' | 'revenue' | 'conversion_rate';

interface Card {
  key: Key;
  label: string;
  kind: 'count' | 'rate' | 'duration' | 'money';
  chart?: ChartMetric;
  lowerIsBetter?: boolean;
}

const CARDS: Card[] = [
  { key: 'visitors', label: 'Unique visitors', kind: 'count', chart: 'visitors' },
  { key: 'sessions', label: 'Visits', kind: 'count', chart: 'sessions' },
  { key: 'pageviews', label: 'Pageviews', kind: 'count', chart: 'pageviews' },
  { key: 'bounce_rate', label: 'Bounce rate', kind: 'rate', lowerIsBetter: true },
  { key: 'avg_session_duration', label: 'Visit duration', kind: 'duration' },
  { key: 'revenue', label: 'Revenue', kind: 'money', chart: 'revenue' },
  { key: 'conversion_rate', label: 'Conversion rate', kind: 'rate', chart: 'conversion_rate' },
];

export const METRIC_LABELS: Record<ChartMetric, string> = {
  visitors: 'Unique visitors',
  sessions: 'Visits',
  pageviews: 'Pageviews',
  revenue: 'Revenue',
  conversion_rate: 'Conversion rate',
};

function display(card: Card, value: number, currency: string): string {
  if (card.kind === 'rate') return formatPercent(value);
  if (card.kind === 'duration') return formatDuration(value);
  if (card.kind === 'money') return formatMoney(value, currency);
  return formatNumber(value);
}

interface Change {
  symbol: '▲' | '▼' | '';
  text: string;
  spoken: string;
  tone: 'good' | 'bad' | 'neutral';
}

/** Counts compare in percent; rates (already percentages) in percentage points. */
export function compare(card: Card, current: number, previous: number): Change {
  const rate = card.kind === 'rate';
  let delta: number;
  if (rate) delta = Math.round((current - previous) * 10) / 10;
  else if (previous === 0) {
    if (current === 0) return { symbol: '', text: '0%', spoken: 'no change from the previous period', tone: 'neutral' };
    return { symbol: '▲', text: 'new', spoken: 'up from none in the previous period', tone: card.lowerIsBetter ? 'bad' : 'good' };
  } else delta = Math.round(((current - previous) / previous) * 100);
  if (delta === 0) return { symbol: '', text: rate ? '0 pp' : '0%', spoken: 'no change from the previous period', tone: 'neutral' };
  const up = delta > 0;
  const amount = Math.abs(delta);
  const unit = rate ? ' pp' : '%';
  const spokenUnit = rate ? ` percentage point${amount === 1 ? '' : 's'}` : '%';
  const good = up !== !!card.lowerIsBetter;
  return {
    symbol: up ? '▲' : '▼',
    text: `${formatNumber(amount)}${unit}`,
    spoken: `${up ? 'up' : 'down'} ${formatNumber(amount)}${spokenUnit} from the previous period`,
    tone: good ? 'good' : 'bad',
  };
}

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  metric: ChartMetric;
  currency: string;
  onSelect: (metric: ChartMetric) => void;
}

export function OverviewCards({ websiteId, resolved, filters, metric, currency, onSelect }: Props) {
  const current = readQuery(websiteId, resolved.range, filters);
  const previous = resolved.previous ? readQuery(websiteId, resolved.previous, filters) : null;
  const { data, error, loading } = useFetch(
    () => Promise.all([api.get<Overview>('/api/v1/analytics/overview', current), previous ? api.get<Overview>('/api/v1/analytics/overview', previous) : null]),
    queryKey(current) + (previous ? queryKey(previous) : ''),
  );
  const [now, before] = data ?? [undefined, null];
  const money = now?.currency ?? currency;
  const cards = CARDS.filter((card) => card.key !== 'revenue' || (now && (now.revenue !== 0 || (before?.revenue ?? 0) !== 0)));

  return (
    <section class="an-overview" aria-label="Overview" aria-busy={loading}>
      {error && (
        <p class="an-error" role="alert">
          Could not load the overview: {error.message}
        </p>
      )}
      <ul class={`an-tiles${loading ? ' an-loading' : ''}`}>
        {cards.map((card) => {
          const value = now?.[card.key];
          // A rate or a duration of a period without visitors is no baseline: nothing to compare.
          const comparable = before && (card.kind === 'count' || card.kind === 'money' || before.visitors > 0);
          const change = value !== undefined && comparable ? compare(card, value, before[card.key]) : null;
          const body = (
            <>
              <span class="an-tile-label">{card.label}</span>
              <span class="an-tile-value" title={value !== undefined && card.kind === 'count' ? formatExact(value) : undefined}>
                {value === undefined ? '–' : display(card, value, money)}
              </span>
              <span class={`an-change an-${change?.tone ?? 'neutral'}`}>
                {change ? (
                  <>
                    <span aria-hidden="true">
                      {change.symbol} {change.text}
                    </span>
                    <span class="an-sr">{change.spoken}</span>
                  </>
                ) : resolved.previous ? (
                  ' '
                ) : (
                  <span class="an-muted">no comparison</span>
                )}
              </span>
            </>
          );
          return (
            <li key={card.key} class="an-tile-item">
              {card.chart ? (
                <button
                  type="button"
                  class={`an-tile an-tile-button${metric === card.chart ? ' an-selected' : ''}`}
                  aria-pressed={metric === card.chart}
                  title={`Show ${card.label.toLowerCase()} on the chart`}
                  onClick={() => onSelect(card.chart!)}
                >
                  {body}
                </button>
              ) : (
                <div class="an-tile">{body}</div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
