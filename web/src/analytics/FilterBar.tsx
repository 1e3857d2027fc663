// The active filters as removable chips ("Country is US ×"); every read sends them.
import { DIMENSION_LABELS, type Filter, type UpdateView, withoutFilter } from './view-state.ts';
import { countryName } from './format.ts';
import { type Goals, useGoals } from './goal-display.tsx';

const OPERATOR_TEXT: Record<Filter['operator'], string> = {
  is: 'is',
  is_not: 'is not',
  contains: 'contains',
  does_not_contain: 'does not contain',
};

/** "Goal is Sign-up": a goal filter names its goals as the owner customized them. */
export function filterText(filter: Filter, goals?: Goals): string {
  const values = filter.dimension === 'goal' && goals ? filter.values.map(goals.label) : filter.values;
  return `${DIMENSION_LABELS[filter.dimension]} ${OPERATOR_TEXT[filter.operator]} ${values.join(' or ')}`;
}

function filterTitle(filter: Filter, goals: Goals): string {
  if (filter.dimension === 'goal') {
    const shown = filterText(filter, goals);
    return shown === filterText(filter) ? shown : `${shown} (${filter.values.join(', ')})`;
  }
  if (filter.dimension !== 'country') return filterText(filter);
  return `Country ${OPERATOR_TEXT[filter.operator]} ${filter.values.map(countryName).join(' or ')}`;
}

export function FilterBar({ filters, onChange }: { filters: Filter[]; onChange: UpdateView }) {
  const goals = useGoals();
  if (filters.length === 0) {
    return <p class="an-hint an-filter-hint">Click a row in a report below to filter by it.</p>;
  }
  return (
    <div class="an-filters" role="group" aria-label="Active filters">
      <ul class="an-chips">
        {filters.map((filter) => (
          <li key={filter.dimension} class="an-chip" title={filterTitle(filter, goals)}>
            <span>{filterText(filter, goals)}</span>
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
      {filters.length > 1 && (
        <button type="button" class="an-link-button" onClick={() => onChange({ filters: [] })}>
          Clear all filters
        </button>
      )}
    </div>
  );
}
