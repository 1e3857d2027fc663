// The active filters as chips ("Country is US ×"; the text opens the filter editor to change it),
// and the "Filter" button that opens the editor to add one. Every read sends the filters.
import { useState } from 'preact/hooks';
import { DIMENSION_LABELS, type Filter, type UpdateView, isSubstringFilter, replaceFilter, withoutFilter } from './view-state.ts';
import { countryName } from './format.ts';
import { FilterEditor, OPERATOR_TEXT } from './FilterEditor.tsx';
import { type Goals, useGoals } from './goal-display.tsx';
import type { ResolvedRange } from './range.ts';

/** "Goal is Sign-up": a goal filter names its goals as the owner customized them (a part of a name stays as typed). */
export function filterText(filter: Filter, goals?: Goals): string {
  const values = filter.dimension === 'goal' && goals && !isSubstringFilter(filter) ? filter.values.map(goals.label) : filter.values;
  return `${DIMENSION_LABELS[filter.dimension]} ${OPERATOR_TEXT[filter.operator]} ${values.join(' or ')}`;
}

function filterTitle(filter: Filter, goals: Goals): string {
  if (filter.dimension === 'goal') {
    const shown = filterText(filter, goals);
    return shown === filterText(filter) ? shown : `${shown} (${filter.values.join(', ')})`;
  }
  if (filter.dimension !== 'country' || isSubstringFilter(filter)) return filterText(filter);
  return `Country ${OPERATOR_TEXT[filter.operator]} ${filter.values.map(countryName).join(' or ')}`;
}

interface Props {
  websiteId: string;
  resolved: ResolvedRange;
  filters: Filter[];
  onChange: UpdateView;
}

export function FilterBar({ websiteId, resolved, filters, onChange }: Props) {
  const goals = useGoals();
  // The filter being changed, 'new' while one is added, null with the editor closed.
  const [editing, setEditing] = useState<Filter | 'new' | null>(null);
  return (
    <div class="an-filters" role="group" aria-label="Active filters">
      <button type="button" class="an-button an-filter-button" aria-haspopup="dialog" onClick={() => setEditing('new')}>
        <span aria-hidden="true">+ </span>Filter
      </button>
      {filters.length === 0 ? (
        <p class="an-hint an-filter-hint">or click a row in a report below.</p>
      ) : (
        <ul class="an-chips">
          {filters.map((filter) => (
            <li key={filter.dimension} class="an-chip" title={filterTitle(filter, goals)}>
              <button type="button" class="an-chip-edit" aria-haspopup="dialog" aria-label={`Change filter: ${filterText(filter, goals)}`} onClick={() => setEditing(filter)}>
                {filterText(filter, goals)}
              </button>
              <button
                type="button"
                class="an-chip-remove"
                aria-label={`Remove filter: ${filterText(filter, goals)}`}
                onClick={() => onChange({ filters: withoutFilter(filters, filter.dimension) })}
              >
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {filters.length > 1 && (
        <button type="button" class="an-link-button" onClick={() => onChange({ filters: [] })}>
          Clear all filters
        </button>
      )}
      {editing && (
        <FilterEditor
          websiteId={websiteId}
          resolved={resolved}
          filters={filters}
          editing={editing === 'new' ? null : editing}
          onApply={(filter, replaced) => onChange({ filters: replaceFilter(filters, replaced, filter) })}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}
