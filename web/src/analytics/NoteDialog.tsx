// Adds a note to the chart or changes or deletes one (the admin notes routes of website-api.md
// section 4). A note is placed on a day of the website's zone: a new one at that day's noon (the
// API's reading of a bare day), a changed one keeps its instant unless its day is changed.
import { useId, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Note } from './chart-helpers.ts';
import { dayIn, isDayString } from './range.ts';
import { useModal } from '../components/useModal.ts';

const MAX_TEXT = 500;

interface Props {
  websiteId: string;
  timeZone: string;
  /** The note changed; null to add one. */
  note: Note | null;
  /** A new note's day, or its instant (an hour bucket of the chart). */
  at: string;
  onSaved: () => void;
  onClose: () => void;
}

export function NoteDialog({ websiteId, timeZone, note, at, onSaved, onClose }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = useId();
  const initialDay = note ? (dayIn(timeZone, note.timestamp) ?? '') : isDayString(at) ? at : (dayIn(timeZone, at) ?? '');
  const [day, setDay] = useState(initialDay);
  const [text, setText] = useState(note?.text ?? '');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const base = `/api/v1/admin/websites/${encodeURIComponent(websiteId)}/notes`;

  useModal(dialog, onClose);

  async function run(action: () => Promise<unknown>) {
    setBusy(true);
    setProblem(null);
    try {
      await action();
      onSaved();
      dialog.current?.close();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  }

  function save(event: Event) {
    event.preventDefault();
    if (text.trim() === '') return setProblem('Write the note’s text.');
    if (!isDayString(day)) return setProblem('Choose the note’s day.');
    // Unchanged day: the note keeps its instant (a new one on an hour keeps that hour).
    const timestamp = day !== initialDay ? day : note ? undefined : at;
    void run(() => (note ? api.put(`${base}/${encodeURIComponent(note.id)}`, { text: text.trim(), ...(timestamp ? { timestamp } : {}) }) : api.post(base, { text: text.trim(), timestamp })));
  }

  return (
    <dialog ref={dialog} class="an-dialog an-note-dialog" aria-labelledby={`${ids}-title`}>
      <form class="an-filter-form" onSubmit={save} noValidate>
        <h2 id={`${ids}-title`} class="an-card-title">
          {note ? 'Edit note' : 'Add note'}
        </h2>
        <label class="an-field">
          Day
          <input type="date" value={day} required onInput={(event) => setDay(event.currentTarget.value)} />
        </label>
        <label class="an-field">
          Note
          <textarea
            class="an-note-input"
            value={text}
            rows={3}
            maxLength={MAX_TEXT}
            required
            aria-describedby={`${ids}-count`}
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </label>
        <p id={`${ids}-count`} class="an-hint">
          {text.length} of {MAX_TEXT} characters. Everyone who can see this website sees its notes.
        </p>
        {problem && (
          <p class="an-error" role="alert">
            {problem}
          </p>
        )}
        <div class="an-filter-actions">
          {note && (
            <button type="button" class="an-button an-danger" disabled={busy} onClick={() => void run(() => api.delete(`${base}/${encodeURIComponent(note.id)}`))}>
              Delete note
            </button>
          )}
          <span class="an-spacer" />
          <button type="button" class="an-button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit" class="an-button an-primary" disabled={busy}>
            {note ? 'Save note' : 'Add note'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
