import type { JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { Card, ConfirmDialog, Dialog, ErrorMessage, Loading, SelectField, TextField, fieldErrors, useAsync } from '../../components/index.ts';
import type { SectionProps } from './SettingsPage.tsx';

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

/** The goals tracked so far, offered while typing a goal step (a datalist). */
export function useGoalNames(websiteId: string): string[] {
  const goals = useAsync(() => api.list<{ goalName: string }>(`/api/v1/admin/websites/${websiteId}/goals`), [websiteId]);
  return goals.data?.map((goal) => goal.goalName) ?? [];
}

function FunnelEditor({
  funnel,
  base,
  goalNames,
  onClose,
  onSaved,
}: {
  funnel: Funnel | null;
  base: string;
  goalNames: string[];
  onClose: () => void;
  onSaved: () => void;
}): JSX.Element {
  const listId = useId();
  const [name, setName] = useState(funnel?.name ?? '');
  const [steps, setSteps] = useState<Step[]>(
    () => funnel?.steps.map((step) => ({ ...step })) ?? [{ type: 'pageview', url: '/' }, { type: 'goal', goalName: '' }],
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  const update = (index: number, change: Partial<Step>) => setSteps((current) => current.map((step, at) => (at === index ? { ...step, ...change } : step)));
  const move = (index: number, by: number) =>
    setSteps((current) => {
      const next = [...current];
      const [step] = next.splice(index, 1);
      next.splice(index + by, 0, step!);
      return next;
    });

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      steps: steps.map((step) => ({
        ...(step.id ? { id: step.id } : {}),
        ...(step.name?.trim() ? { name: step.name.trim() } : {}),
        type: step.type,
        ...(step.type === 'pageview' ? { url: (step.url ?? '').trim() } : { goalName: (step.goalName ?? '').trim() }),
      })),
    };
    try {
      if (funnel) await api.put(`${base}/${funnel.id}`, body);
      else await api.post(base, body);
      onSaved();
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog open title={funnel ? `Edit the funnel "${funnel.name}"` : 'New funnel'} onClose={onClose}>
      <form onSubmit={save} class="stack">
        <TextField label="Funnel name" value={name} onValue={setName} required maxLength={100} error={fields.name} />
        <datalist id={listId}>
          {goalNames.map((goal) => (
            <option key={goal} value={goal} />
          ))}
        </datalist>
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
                  <button type="button" class="button small" disabled={index === 0} onClick={() => move(index, -1)}>
                    Move up<span class="visually-hidden"> step {index + 1}</span>
                  </button>
                  <button type="button" class="button small" disabled={index === steps.length - 1} onClick={() => move(index, 1)}>
                    Move down<span class="visually-hidden"> step {index + 1}</span>
                  </button>
                  <button
                    type="button"
                    class="button small danger-text"
                    disabled={steps.length <= MIN_STEPS}
                    onClick={() => setSteps((current) => current.filter((_, at) => at !== index))}
                  >
                    Remove<span class="visually-hidden"> step {index + 1}</span>
                  </button>
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
        <ErrorMessage error={fields.steps ?? error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button primary" disabled={busy}>
            {busy ? 'Saving…' : funnel ? 'Save funnel' : 'Create funnel'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function FunnelsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/funnels`;
  const funnels = useAsync(() => api.list<Funnel>(base), [base]);
  const goalNames = useGoalNames(website.id);
  const [editing, setEditing] = useState<Funnel | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Funnel | null>(null);

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
      <ErrorMessage error={funnels.error} onRetry={funnels.reload} />
      {!funnels.data && !funnels.error && <Loading />}
      {funnels.data && funnels.data.length === 0 && <p>No funnel yet.</p>}
      {funnels.data && funnels.data.length > 0 && (
        <ul class="plain-list">
          {funnels.data.map((funnel) => (
            <li key={funnel.id} class="list-item">
              <div class="row-between">
                <h3 class="item-title">{funnel.name}</h3>
                {editable && (
                  <div class="actions">
                    <button type="button" class="button small" onClick={() => setEditing(funnel)}>
                      Edit<span class="visually-hidden"> {funnel.name}</span>
                    </button>
                    <button type="button" class="button small danger-text" onClick={() => setDeleting(funnel)}>
                      Delete<span class="visually-hidden"> {funnel.name}</span>
                    </button>
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
      {editing && (
        <FunnelEditor
          funnel={editing === 'new' ? null : editing}
          base={base}
          goalNames={goalNames}
          onClose={() => setEditing(null)}
          onSaved={funnels.reload}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete the funnel "${deleting?.name ?? ''}"?`}
        message="It disappears from the funnels and their reports."
        confirmLabel="Delete funnel"
        danger
        onConfirm={async () => {
          await api.delete(`${base}/${deleting!.id}`);
          funnels.reload();
        }}
        onClose={() => setDeleting(null)}
      />
    </Card>
  );
}
