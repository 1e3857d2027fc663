// The filter editor: a dialog to add a filter or change one (dimension, operator, one value or
// several, OR-ed), with the values the dimension's report shows suggested. Applying writes the
// filter into the URL like a click on a row does.
import { useId, useRef, useState } from 'preact/hooks';
import { type Suggestion, fetchSuggestions, suggestsValues } from './filter-suggestions.ts';
import { useGoals } from './goal-display.tsx';
import type { ResolvedRange } from './range.ts';
import { useFetch } from './use-fetch.ts';
import { DIMENSION_LABELS, type Dimension, type Filter, OPERATORS, type Operator, filterable, isSubstringFilter } from './view-state.ts';
import { useModal } from '../components/useModal.ts';

export const OPERATOR_TEXT: Record<Operator, string> = {
  is: 'is',
  is_not: 'is not',
  contains: 'contains',
  does_not_contain: 'does not contain',
};

/** The server takes at most 50 values a filter. */
const MAX_VALUES = 50;

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  /** The filter being changed; null to add one. */
  editing: Filter | null;
  onApply: (filter: Filter, replaced: Dimension | null) => void;
  onClose: () => void;
}

export function FilterEditor({ websiteId, resolved, filters, editing, onApply, onClose }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = useId();
  const goals = useGoals();
  const unused = (Object.keys(DIMENSION_LABELS) as Dimension[]).find((name) => !filters.some((filter) => filter.dimension === name)) ?? 'page';
  const [dimension, setDimension] = useState<Dimension>(editing?.dimension ?? unused);
  const [operator, setOperator] = useState<Operator>(editing?.operator ?? 'is');
  const [values, setValues] = useState<string[]>(editing?.values ?? []);
  const [draft, setDraft] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const suggestions = useFetch<Suggestion[]>(
    suggestsValues(dimension) ? () => fetchSuggestions(dimension, websiteId, resolved, filters, goals) : null,
    `${dimension}|${websiteId}|${JSON.stringify(resolved.range)}`,
  );

  useModal(dialog, onClose);

  function chooseDimension(next: Dimension) {
    setDimension(next);
    setValues([]);
    setProblem(null);
  }

  /** The values with `text` added; null (and a message) when it cannot be sent. */
  function plus(current: string[], text: string): string[] | null {
    const value = text.trim();
    if (value === '') return current;
    if (!filterable(value)) {
      setProblem('A value cannot contain a comma and is at most 512 characters.');
      return null;
    }
    if (current.includes(value)) return current;
    if (current.length >= MAX_VALUES) {
      setProblem(`A filter takes at most ${MAX_VALUES} values.`);
      return null;
    }
    setProblem(null);
    return [...current, value];
  }

  function addDraft() {
    const next = plus(values, draft);
    if (next) {
      setValues(next);
      setDraft('');
    }
  }

  function apply(event: Event) {
    event.preventDefault();
    const next = plus(values, draft);
    if (!next) return;
    if (next.length === 0) {
      setProblem('Enter a value to filter by.');
      return;
    }
    onApply({ dimension, operator, values: next }, editing?.dimension ?? null);
    dialog.current?.close();
  }

  const substring = isSubstringFilter({ operator });
  // A part of a value is shown as typed: it names no one country or goal.
  const labelOf = (value: string) =>
    substring ? value : (suggestions.data?.find((item) => item.value === value)?.label ?? (dimension === 'goal' ? goals.label(value) : value));
  const title = editing ? 'Change filter' : 'Add filter';
  return (
    <dialog ref={dialog} class="an-dialog an-filter-dialog" aria-labelledby={`${ids}-title`}>
      <form class="an-filter-form" onSubmit={apply} noValidate>
        <div class="an-dialog-head">
          <h2 id={`${ids}-title`} class="an-card-title">
            {title}
          </h2>
        </div>
        <div class="an-filter-row">
          <label class="an-field">
            Dimension
            <select value={dimension} onChange={(event) => chooseDimension(event.currentTarget.value as Dimension)}>
              {(Object.keys(DIMENSION_LABELS) as Dimension[]).map((name) => (
                <option key={name} value={name} disabled={name !== editing?.dimension && filters.some((filter) => filter.dimension === name)}>
                  {DIMENSION_LABELS[name]}
                </option>
              ))}
            </select>
          </label>
          <label class="an-field">
            Operator
            <select value={operator} onChange={(event) => setOperator(event.currentTarget.value as Operator)}>
              {OPERATORS.map((name) => (
                <option key={name} value={name}>
                  {OPERATOR_TEXT[name]}
                </option>
              ))}
            </select>
          </label>
        </div>
        <div class="an-filter-values">
          <label class="an-field" for={`${ids}-value`}>
            Value{substring ? (dimension === 'country' ? ' (part of the code, such as US)' : ' (part of it)') : ''}
          </label>
          <div class="an-filter-add">
            <input
              id={`${ids}-value`}
              list={`${ids}-suggestions`}
              value={draft}
              autocomplete="off"
              spellcheck={false}
              aria-describedby={`${ids}-hint`}
              onInput={(event) => setDraft(event.currentTarget.value)}
              onKeyDown={(event) => {
                // Enter adds the value typed; with none typed it applies the filter.
                if (event.key === 'Enter' && draft.trim() !== '') {
                  event.preventDefault();
                  addDraft();
                }
              }}
            />
            <button type="button" class="an-button" onClick={addDraft}>
              Add value
            </button>
          </div>
          <datalist id={`${ids}-suggestions`}>
            {(suggestions.data ?? []).map((item) => (
              <option key={item.value} value={item.value}>
                {item.label !== item.value ? item.label : undefined}
              </option>
            ))}
          </datalist>
          <p id={`${ids}-hint`} class="an-hint">
            Several values match any of them.
            {suggestsValues(dimension) ? ' Suggestions come from this period’s report.' : ''}
          </p>
          {values.length > 0 && (
            <ul class="an-chips an-filter-chosen" aria-label="Chosen values">
              {values.map((value) => (
                <li key={value} class="an-chip">
                  <span>{labelOf(value)}</span>
                  <button
                    type="button"
                    class="an-chip-remove"
                    aria-label={`Remove value ${labelOf(value)}`}
                    onClick={() => setValues(values.filter((kept) => kept !== value))}
                  >
                    <span aria-hidden="true">×</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
          {problem && (
            <p class="an-error" role="alert">
              {problem}
            </p>
          )}
        </div>
        <div class="an-filter-actions">
          <button type="button" class="an-button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit" class="an-button an-primary">
            Apply filter
          </button>
        </div>
      </form>
    </dialog>
  );
}
