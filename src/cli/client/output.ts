import type { Command } from 'commander';
import { isInstant, layoutTable, shortTime, tableStyle, tsvLines } from './table.ts';

// What the client commands print. Results go to stdout (a table or a record for people, one JSON
// document with --json for programs); messages, warnings and errors go to stderr, so
// `sightline ... --json | jq` and `TOKEN=$(sightline tokens create)` see the result only.

export interface JsonOption {
  json?: boolean;
}

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** Adds the --json option every client command has. */
export function withJson(command: Command, what = 'the response data'): Command {
  return command.option('--json', `print ${what} as one JSON document (for scripts; pipe it to jq)`);
}

/** Writes a line to stderr: progress, confirmations and warnings are not results. */
export function say(text: string): void {
  process.stderr.write(`${text}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** One cell: text a terminal shows as is (no control characters from the server reach it). */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  // eslint-disable-next-line no-control-regex
  return String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** A table cell: like `cell`, with instants shortened to minutes in local time (--json keeps them whole). */
function tableCell(value: unknown): string {
  return typeof value === 'string' && isInstant(value) ? shortTime(value) : cell(value);
}

/**
 * A table: on a terminal, columns padded to their widest cell under headers in capitals, fitted to
 * its width, times to the minute; into a pipe, tab-separated whole values (see tableStyle). `empty`
 * goes to stderr when there is no row.
 */
export function printTable<T>(rows: readonly T[], columns: Array<Column<T>>, empty: string): void {
  if (rows.length === 0) {
    say(empty);
    return;
  }
  const style = tableStyle();
  let lines: string[];
  if (style.kind === 'tsv') {
    // cell() has already turned tabs and newlines into spaces, so a value never splits a row.
    lines = tsvLines(rows.map((row) => columns.map((column) => cell(column.value(row)))));
  } else {
    const headers = columns.map((column) => column.header.toUpperCase());
    lines = layoutTable(headers, rows.map((row) => columns.map((column) => tableCell(column.value(row)))), style.width);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A single record as aligned "label: value" lines. */
export function printRecord(pairs: Array<[string, unknown]>): void {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 1;
  process.stdout.write(`${pairs.map(([label, value]) => `${`${label}:`.padEnd(width)} ${cell(value)}`).join('\n')}\n`);
}

/** The JSON result of a response: its `data`, or `data` and its siblings together when it has any. */
export function jsonResult(body: Record<string, unknown>): unknown {
  const { status: _status, ...rest } = body;
  return Object.keys(rest).length === 1 && 'data' in rest ? rest.data : rest;
}

/** Prints `--json` output or runs the human rendering. */
export function emit(options: JsonOption, body: Record<string, unknown>, human: () => void): void {
  if (options.json) printJson(jsonResult(body));
  else human();
}

/**
 * A new raw token or key: the value alone on stdout (so `$(...)` captures it) and the warning on
 * stderr. With --json the value is inside the JSON result instead, and the warning still goes out.
 */
export function printSecret(options: JsonOption, body: Record<string, unknown>, what: string, secret: string): void {
  if (options.json) {
    printJson(jsonResult(body));
    say(`The JSON above holds the raw ${what}. Store it now: it will not be shown again.`);
    return;
  }
  say(`The new ${what} follows. Copy it now: it will not be shown again.`);
  process.stdout.write(`${secret}\n`);
}

/** The end of a command that changes something: --json prints the result, people get the message. */
export function done(options: JsonOption, body: Record<string, unknown>, message: string): void {
  if (options.json) printJson(jsonResult(body));
  else say(message);
}
