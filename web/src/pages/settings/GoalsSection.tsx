import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, one, request } from '../../api.ts';
import { ActionButton, Card, DataTable, ErrorMessage, FormDialog, Loading, TextAreaField, TextField, fieldErrors, formatDateTime, formatNumber, useAsync, useSubmit } from '../../components/index.ts';
import type { SectionProps } from './section-props.ts';

interface TrackedGoal {
  goalName: string;
  completions: number;
  visitors: number;
  lastCompletedAt: string;
  displayName: string | null;
  color: string | null;
  description: string | null;
}

interface Customization {
  goalName: string;
  displayName: string | null;
  color: string | null;
  description: string | null;
  updatedAt: string;
}

interface PaletteColor {
  color: string;
  family: string;
  label: string;
}

interface Row {
  goalName: string;
  displayName: string | null;
  color: string | null;
  description: string | null;
  tracked?: TrackedGoal;
  customized: boolean;
}

const COLUMNS = ['Goal', 'Shown as', 'Colour', { label: 'Completions', class: 'num' }, { label: 'Visitors', class: 'num' }, 'Last completed'];

function Swatch({ color }: { color: string | null }): JSX.Element {
  return <span class="swatch" style={color ? { background: color } : undefined} aria-hidden="true" />;
}

function EditGoal({
  row,
  palette,
  path,
  onClose,
  onSaved,
}: {
  row: Row;
  palette: PaletteColor[];
  path: string;
  onClose: () => void;
  onSaved: () => void;
}): JSX.Element {
  const [displayName, setDisplayName] = useState(row.displayName ?? '');
  const [color, setColor] = useState(row.color ?? '');
  const [description, setDescription] = useState(row.description ?? '');
  const { busy, error, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const save = onSubmit(async () => {
    await api.patch(path, {
      goalName: row.goalName,
      displayName: displayName.trim() || null,
      color: color || null,
      description: description.trim() || null,
    });
    onSaved();
    onClose();
  });
  return (
    <FormDialog
      title={`How "${row.goalName}" is shown`}
      onClose={onClose}
      onSubmit={save}
      class="stack"
      busy={busy}
      error={Object.keys(fields).length ? null : error}
      submitLabel="Save"
    >
      <TextField
        label="Display name"
        value={displayName}
        onValue={setDisplayName}
        maxLength={80}
        placeholder={row.goalName}
        hint="Shown in reports instead of the goal name; the name clients send does not change."
        error={fields.displayName ?? fields.name}
      />
      <TextAreaField
        label="Description"
        value={description}
        onValue={setDescription}
        maxLength={300}
        rows={2}
        hint="What the goal means, for the people reading the reports."
        error={fields.description}
      />
      <fieldset class="swatches">
        <legend>Colour</legend>
        <label class="swatch-option">
          <input type="radio" name="goal-color" value="" checked={color === ''} onChange={() => setColor('')} />
          <Swatch color={null} />
          <span>Default</span>
        </label>
        {palette.map((option) => (
          <label class="swatch-option" key={option.color}>
            <input type="radio" name="goal-color" value={option.color} checked={color === option.color} onChange={() => setColor(option.color)} />
            <Swatch color={option.color} />
            <span>{option.label}</span>
          </label>
        ))}
      </fieldset>
      {fields.color && <p class="field-error">{fields.color}</p>}
    </FormDialog>
  );
}

export function GoalsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/goals`;
  const state = useAsync(async () => {
    const [tracked, customizations] = await Promise.all([
      api.list<TrackedGoal>(base),
      request<Customization>('GET', `${base}/customizations`),
    ]);
    return { tracked, customizations: customizations.data, palette: (customizations.colors as PaletteColor[] | undefined) ?? [] };
  }, [base]);
  const [editing, setEditing] = useState<Row | null>(null);
  const resetting = useSubmit();

  if (state.error) return <ErrorMessage error={state.error} onRetry={state.reload} />;
  if (!state.data) return <Loading label="Loading goals…" />;
  const { tracked, customizations, palette } = state.data;
  const custom = new Map(customizations.map((item) => [item.goalName, item]));
  const rows: Row[] = tracked.map((goal) => ({
    goalName: goal.goalName,
    displayName: custom.get(goal.goalName)?.displayName ?? goal.displayName,
    color: custom.get(goal.goalName)?.color ?? goal.color,
    description: custom.get(goal.goalName)?.description ?? goal.description,
    tracked: goal,
    customized: custom.has(goal.goalName),
  }));
  for (const item of customizations) {
    if (!tracked.some((goal) => goal.goalName === item.goalName)) rows.push({ ...item, customized: true });
  }
  const colorLabel = (color: string | null) => palette.find((option) => option.color === color)?.label ?? color ?? 'Default';

  const reset = (row: Row) =>
    resetting.run(async () => {
      await one('DELETE', `${base}/customizations`, { query: { goalName: row.goalName } });
      state.reload();
    });

  return (
    <Card title="Goals">
      <p class="muted">
        Goals are created by tracking them (<code>data-fast-goal</code>, <code>window.datafast('goal')</code> or the API). Here you
        choose how each one is shown.
      </p>
      <ErrorMessage error={resetting.error} />
      {rows.length === 0 ? (
        <p>No goal has been tracked yet.</p>
      ) : (
        <DataTable label="Goals" columns={COLUMNS} actions={editable}>
          {rows.map((row) => (
            <tr key={row.goalName}>
              <td>
                <code>{row.goalName}</code>
              </td>
              <td>{row.displayName ?? <span class="muted">–</span>}</td>
              <td>
                <span class="swatch-cell">
                  <Swatch color={row.color} /> {colorLabel(row.color)}
                </span>
              </td>
              <td class="num">{formatNumber(row.tracked?.completions ?? 0)}</td>
              <td class="num">{formatNumber(row.tracked?.visitors ?? 0)}</td>
              <td>{row.tracked ? formatDateTime(row.tracked.lastCompletedAt) : '–'}</td>
              {editable && (
                <td class="actions">
                  <ActionButton label="Edit" about={row.goalName} onClick={() => setEditing(row)} />
                  {row.customized && <ActionButton label="Reset" about={row.goalName} onClick={() => reset(row)} />}
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      )}
      {editing && <EditGoal row={editing} palette={palette} path={`${base}/customizations`} onClose={() => setEditing(null)} onSaved={state.reload} />}
    </Card>
  );
}
