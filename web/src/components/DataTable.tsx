import type { ComponentChildren, JSX } from 'preact';
import { TableWrap } from './TableWrap.tsx';

/** A column heading: its text, or its text and a class (`num` for numbers). */
export type Column = string | { label: string; class: string };

export interface DataTableProps {
  /** The name of the scrolling region (TableWrap). */
  label: string;
  columns: Column[];
  /** A last, unlabelled column for the rows' buttons (named "Actions" for screen readers). */
  actions?: boolean;
  /** The rows (`<tr>`). */
  children: ComponentChildren;
}

/** A table of items: the column headings, then the rows given, in a TableWrap. */
export function DataTable({ label, columns, actions, children }: DataTableProps): JSX.Element {
  return (
    <TableWrap label={label}>
      <table>
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <th key={column.label} scope="col" class={column.class}>
                  {column.label}
                </th>
              ),
            )}
            {actions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </TableWrap>
  );
}
