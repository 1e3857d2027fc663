// What the settings sections' editors share: the goal names offered while typing one, and the
// dialog of an item that is either new (POST to the list) or edited (PUT to its own path).
import type { ComponentChildren, JSX } from 'preact';
import { api } from '../../api.ts';
import { FormDialog, type SubmitState, useAsync } from '../../components/index.ts';

/** The goals tracked so far, offered while typing a goal name (a datalist). */
export function useGoalNames(websiteId: string): string[] {
  const goals = useAsync(() => api.list<{ goalName: string }>(`/api/v1/admin/websites/${websiteId}/goals`), [websiteId]);
  return goals.data?.map((goal) => goal.goalName) ?? [];
}

/**
 * The `<datalist>` of goal names, for the `list` attribute of the inputs that take one. With
 * `labelOf`, each option shows the goal's display name beside it where it differs; the value
 * picked is always the raw goal name.
 */
export function GoalNameList({ id, goalNames, labelOf }: { id: string; goalNames: string[]; labelOf?: (goalName: string) => string }): JSX.Element {
  return (
    <datalist id={id}>
      {goalNames.map((goal) => {
        const shown = labelOf?.(goal) ?? goal;
        return (
          <option key={goal} value={goal}>
            {shown !== goal ? shown : undefined}
          </option>
        );
      })}
    </datalist>
  );
}

/** What an editor of a list's item takes: the item (null for a new one), and what to do once saved. */
export interface EditorProps<T> {
  item: T | null;
  /** The list's path. */
  base: string;
  /** The goal names offered while typing one. */
  goalNames: string[];
  onClose: () => void;
  /** After a save: reload the list. */
  onSaved: () => void;
}

export interface ItemDialogProps {
  /** What the list holds ("alert"): in the title and on the submit button. */
  noun: string;
  /** The item edited, or null for a new one. */
  item: { id: string; name: string } | null;
  /** The list's path: a new item is posted to it, an edited one put to `${base}/${id}`. */
  base: string;
  /** The body to send, read when the form is submitted. */
  body: () => unknown;
  /** The form's submit state (its error also marks the fields). */
  submit: SubmitState;
  /** The error to show above the buttons (the one no field shows). */
  error: unknown;
  onSaved: () => void;
  onClose: () => void;
  children: ComponentChildren;
}

/** "New alert" or "Edit the alert …": the fields given, then the save, which reloads the list and closes. */
export function ItemDialog({ noun, item, base, body, submit, error, onSaved, onClose, children }: ItemDialogProps): JSX.Element {
  const save = submit.onSubmit(async () => {
    if (item) await api.put(`${base}/${item.id}`, body());
    else await api.post(base, body());
    onSaved();
    onClose();
  });
  return (
    <FormDialog
      title={item ? `Edit the ${noun} "${item.name}"` : `New ${noun}`}
      onClose={onClose}
      onSubmit={save}
      class="stack"
      busy={submit.busy}
      error={error}
      submitLabel={item ? `Save ${noun}` : `Create ${noun}`}
    >
      {children}
    </FormDialog>
  );
}
