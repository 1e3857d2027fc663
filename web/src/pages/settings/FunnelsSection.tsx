import type { JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, Card, Loaded, SelectField, TextField, fieldErrors, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import type { SectionProps } from './section-props.ts';
import { type Goals, useGoalCustomizations } from '../../analytics/goal-display.tsx';
import { type EditorProps, GoalNameList, ItemDialog, useGoalNames } from './shared.tsx';

interface Step {
  id?: string;
  name?: string;
  type: 'pageview' | 'goal';
  url?: string;
  goalName?: string;
}

interface Funnel {
  id: string;
  name: string;
  steps: Step[];
  createdAt: string;
}

const MIN_STEPS = 2;
const MAX_STEPS = 8;

function describeStep(step: Step): string {
  const what = step.type === 'goal' ? `goal ${step.goalName}` : `page ${step.url}`;
  return step.name && step.name !== step.url && step.name !== step.goalName ? `${step.name} (${what})` : what;
}

function FunnelEditor({ item: funnel, base, goalNames, goals, onClose, onSaved }: EditorProps<Funnel> & { goals: Goals }): JSX.Element {
  const listId = useId();
  const [name, setName] = useState(funnel?.name ?? '');
  const [steps, setSteps] = useState<Step[]>(
    () => funnel?.steps.map((step) => ({ ...step })) ?? [{ type: 'pageview', url: '/' }, { type: 'goal', goalName: '' }],
  );
  const submit = useSubmit();
  const fields = fieldErrors(submit.error);

  const update = (index: number, change: Partial<Step>) => setSteps((current) => current.map((step, at) => (at === index ? { ...step, ...change } : step)));
  const move = (index: number, by: number) =>
    setSteps((current) => {
      const next = [...current];
      const [step] = next.splice(index, 1);
      next.splice(index + by, 0, step!);
      return next;
    });

  const body = () => ({
    name: name.trim(),
    steps: steps.map((step) => ({
      ...(step.id ? { id: step.id } : {}),
      ...(step.name?.trim() ? { name: step.name.trim() } : {}),
      type: step.type,
      ...(step.type === 'pageview' ? { url: (step.url ?? '').trim() } : { goalName: (step.goalName ?? '').trim() }),
    })),
  });

  return (
    <ItemDialog
      noun="funnel"
      item={funnel}
      base={base}
      body={body}
      submit={submit}
      error={fields.steps ?? submit.error}
      onSaved={onSaved}
      onClose={onClose}
    >
      <TextField label="Funnel name" value={name} onValue={setName} required maxLength={100} error={fields.name} />
      <GoalNameList id={listId} goalNames={goalNames} labelOf={goals.label} />
      <ol class="steps">
        {steps.map((step, index) => (
          <li key={index} class="step">
            <fieldset>
              <legend>Step {index + 1}</legend>
              <div class="form-grid compact">
                <SelectField
                  label="Type"
                  value={step.type}
                  onValue={(type) => update(index, { type: type as Step['type'] })}
                  options={[
                    ['pageview', 'Visited a page'],
                    ['goal', 'Completed a goal'],
                  ]}
                />
                {step.type === 'pageview' ? (
                  <TextField
                    label="Page path or URL"
                    value={step.url ?? ''}
                    onValue={(url) => update(index, { url })}
                    required
                    maxLength={2048}
                    placeholder="/pricing"
                    error={fields[`steps[${index}].url`]}
                  />
                ) : (
                  <TextField
                    label="Goal name"
                    value={step.goalName ?? ''}
                    onValue={(goalName) => update(index, { goalName })}
                    required
                    maxLength={64}
                    list={listId}
                    spellcheck={false}
                    error={fields[`steps[${index}].goalName`]}
                  />
                )}
                <TextField
                  label="Label (optional)"
                  value={step.name ?? ''}
                  onValue={(stepName) => update(index, { name: stepName })}
                  maxLength={100}
                  error={fields[`steps[${index}].name`]}
                />
              </div>
              <div class="step-actions">
                <ActionButton label="Move up" about={`step ${index + 1}`} disabled={index === 0} onClick={() => move(index, -1)} />
                <ActionButton label="Move down" about={`step ${index + 1}`} disabled={index === steps.length - 1} onClick={() => move(index, 1)} />
                <ActionButton
                  label="Remove"
                  about={`step ${index + 1}`}
                  danger
                  disabled={steps.length <= MIN_STEPS}
                  onClick={() => setSteps((current) => current.filter((_, at) => at !== index))}
                />
              </div>
            </fieldset>
          </li>
        ))}
      </ol>
      <div>
        <button
          type="button"
          class="button small"
          disabled={steps.length >= MAX_STEPS}
          onClick={() => setSteps((current) => [...current, { type: 'pageview', url: '' }])}
        >
          Add a step
        </button>
        <span class="muted small"> {MIN_STEPS} to {MAX_STEPS} steps.</span>
      </div>
    </ItemDialog>
  );
}

export function FunnelsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/funnels`;
  const funnels = useAsync(() => api.list<Funnel>(base), [base]);
  const goalNames = useGoalNames(website.id);
  const goals = useGoalCustomizations(website.id);
  const [editing, setEditing] = useState<Funnel | 'new' | null>(null);
  const deletion = useConfirm((funnel: Funnel) => ({
    title: `Delete the funnel "${funnel.name}"?`,
    message: 'It disappears from the funnels and their reports.',
    confirmLabel: 'Delete funnel',
    onConfirm: async () => {
      await api.delete(`${base}/${funnel.id}`);
      funnels.reload();
    },
  }));

  return (
    <Card
      title="Funnels"
      actions={
        editable && (
          <button type="button" class="button primary small" onClick={() => setEditing('new')}>
            New funnel
          </button>
        )
      }
    >
      <p class="muted">A funnel follows visitors through 2 to 8 steps (pages or goals) and shows where they drop off.</p>
      <Loaded state={funnels} empty={<p>No funnel yet.</p>}>
        {(list) => (
          <ul class="plain-list">
            {list.map((funnel) => (
              <li key={funnel.id} class="list-item">
                <div class="row-between">
                  <h3 class="item-title">{funnel.name}</h3>
                  {editable && (
                    <div class="actions">
                      <ActionButton label="Edit" about={funnel.name} onClick={() => setEditing(funnel)} />
                      <ActionButton label="Delete" about={funnel.name} danger onClick={() => deletion.ask(funnel)} />
                    </div>
                  )}
                </div>
                <ol class="funnel-steps">
                  {funnel.steps.map((step, index) => (
                    <li key={step.id ?? index}>{describeStep(step)}</li>
                  ))}
                </ol>
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {editing && (
        <FunnelEditor
          item={editing === 'new' ? null : editing}
          base={base}
          goalNames={goalNames}
          goals={goals}
          onClose={() => setEditing(null)}
          onSaved={funnels.reload}
        />
      )}
      {deletion.dialog}
    </Card>
  );
}
