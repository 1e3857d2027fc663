// The notes of the charted range listed under the chart; whoever may write notes gets an "Edit"
// button on each (the keyboard's way to a note; the mouse can also click its marker on the chart).
import type { Note } from './chart-helpers.ts';
import { formatInstant } from './format.ts';

interface Props {
  notes: Note[];
  timeZone: string;
  /** Null when the signed-in account may not write notes (a viewer). */
  onEdit: ((note: Note) => void) | null;
}

export function ChartNotes({ notes, timeZone, onEdit }: Props) {
  if (notes.length === 0) return null;
  return (
    <div class="an-notes">
      <h3 class="an-subheading">Notes</h3>
      <ul>
        {notes.map((note) => (
          <li key={note.id}>
            <span class="an-note-dot" aria-hidden="true" />
            <time dateTime={note.timestamp}>{formatInstant(note.timestamp, timeZone)}</time>
            {' · '}
            <span class="an-note-text">{note.text}</span>
            {note.author && <span class="an-muted"> — {note.author.name}</span>}
            {onEdit && (
              <button type="button" class="an-link-button an-note-edit" aria-haspopup="dialog" onClick={() => onEdit(note)}>
                Edit<span class="an-sr"> the note “{note.text}”</span>
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
