// The period: a native select (keyboard usable as it is) and, for a custom range, two date inputs.
// Days are the website's days; the hint under the control says which zone they are in.
import { useEffect, useState } from 'preact/hooks';
import { PERIODS, type Period, type UpdateView, type ViewState, isDay } from './view-state.ts';
import type { ResolvedRange } from './range.ts';

interface Props {
  view: ViewState;
  resolved: ResolvedRange;
  today: string;
  timeZone: string;
  onChange: UpdateView;
}

export function DateRangePicker({ view, resolved, today, timeZone, onChange }: Props) {
  const [custom, setCustom] = useState(view.period === 'custom');
  const [from, setFrom] = useState(view.from ?? resolved.chartRange.startAt);
  const [to, setTo] = useState(view.to ?? resolved.chartRange.endAt);
  const [problem, setProblem] = useState<string | null>(null);

  // Back/forward may change the period under us.
  useEffect(() => {
    setCustom(view.period === 'custom');
    if (view.period === 'custom' && view.from && view.to) {
      setFrom(view.from);
      setTo(view.to);
    }
  }, [view.period, view.from, view.to]);

  function choose(value: Period) {
    if (value === 'custom') {
      setCustom(true);
      setFrom(resolved.chartRange.startAt);
      setTo(resolved.chartRange.endAt);
      setProblem(null);
      return;
    }
    setCustom(false);
    onChange({ period: value, from: undefined, to: undefined });
  }

  function apply(event: Event) {
    event.preventDefault();
    if (!isDay(from) || !isDay(to)) {
      setProblem('Enter both dates.');
      return;
    }
    if (from > to) {
      setProblem('The start date must not be after the end date.');
      return;
    }
    setProblem(null);
    onChange({ period: 'custom', from, to });
  }

  return (
    <div class="an-range">
      <div class="an-range-row">
        <label class="an-field">
          <span class="an-field-label">Date range</span>
          <select
            value={custom ? 'custom' : view.period}
            onChange={(event) => choose((event.currentTarget as HTMLSelectElement).value as Period)}
          >
            {PERIODS.map((period) => (
              <option key={period.value} value={period.value}>
                {period.label}
              </option>
            ))}
          </select>
        </label>
        {custom && (
          <form class="an-custom" onSubmit={apply} aria-label="Custom date range">
            <label class="an-field">
              <span class="an-field-label">From</span>
              <input type="date" value={from} max={today} required onInput={(event) => setFrom((event.currentTarget as HTMLInputElement).value)} />
            </label>
            <label class="an-field">
              <span class="an-field-label">To</span>
              <input type="date" value={to} max={today} required onInput={(event) => setTo((event.currentTarget as HTMLInputElement).value)} />
            </label>
            <button type="submit" class="an-button">
              Apply
            </button>
          </form>
        )}
      </div>
      {problem && (
        <p class="an-error" role="alert">
          {problem}
        </p>
      )}
      <p class="an-hint">
        {resolved.label} · days in {timeZone}
      </p>
    </div>
  );
}
