import type { ComponentChildren, JSX } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
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

const labelOf = (column: Column) => (typeof column === 'string' ? column : column.label);

/**
 * A table of items: the column headings, then the rows given, in a TableWrap. On a phone
 * (styles.css, at most 640 px) each row becomes a block: its first cell as a title, every other
 * cell on a line of its own after its column's name (each cell's `data-label`, set here), and the
 * row's buttons last, so none is ever off the screen. The table, row and cell roles are set
 * explicitly: a browser may drop a table's semantics once its parts are not displayed as one.
 */
export function DataTable({ label, columns, actions, children }: DataTableProps): JSX.Element {
  const body = useRef<HTMLTableSectionElement>(null);
  // After every render: the rows are the caller's, so they are labelled where they are drawn.
  useLayoutEffect(() => {
    for (const row of body.current?.rows ?? []) {
      row.setAttribute('role', 'row');
      [...row.cells].forEach((cell, index) => {
        cell.setAttribute('role', cell.tagName === 'TH' ? 'rowheader' : 'cell');
        const column = columns[index];
        if (column !== undefined) cell.dataset.label = labelOf(column);
      });
    }
  });
  return (
    <TableWrap label={label}>
      <table class="data-table" role="table">
        <thead role="rowgroup">
          <tr role="row">
            {columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column} scope="col" role="columnheader">
                  {column}
                </th>
              ) : (
                <th key={column.label} scope="col" role="columnheader" class={column.class}>
                  {column.label}
                </th>
              ),
            )}
            {actions && (
              <th scope="col" role="columnheader">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody ref={body} role="rowgroup">
          {children}
        </tbody>
      </table>
    </TableWrap>
  );
}
