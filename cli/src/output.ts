import { jsonText, visible } from './terminal.ts';

// What goes to stdout: JSON for scripts (--json), tables and lines for people.
// Progress and diagnostics go to stderr, so stdout stays parseable. Nothing
// reaches the terminal without `visible` (control characters shown, never
// acted on); values from others are made one line where they are put in.

export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value, 2)}\n`);
}

/** One JSON value per line (`listen --json`). */
export function printJsonLine(value: unknown): void {
  process.stdout.write(`${jsonText(value)}\n`);
}

/** A JSON value on stderr (errors with --json). */
export function noteJson(value: unknown): void {
  process.stderr.write(`${jsonText(value)}\n`);
}

export function printLine(text = ''): void {
  process.stdout.write(`${visible(text, { keepNewlines: true })}\n`);
}

export function note(text: string): void {
  process.stderr.write(`${visible(text, { keepNewlines: true })}\n`);
}

export type Column<T> = { header: string; value: (row: T) => unknown; maxWidth?: number };

/** A plain-text table: a header row, then one row per item, columns padded to fit. */
export function renderTable<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => cellText(column.value(row), column.maxWidth)));
  const headers = columns.map((column) => column.header);
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

export function printTable<T>(rows: T[], columns: Column<T>[], empty = 'Nothing to show.'): void {
  if (rows.length === 0) note(empty);
  else printLine(renderTable(rows, columns));
}

/** `key: value` lines, keys aligned. */
export function printFields(fields: Array<[string, unknown]>): void {
  const width = Math.max(...fields.map(([key]) => key.length));
  for (const [key, value] of fields) printLine(`${`${key}:`.padEnd(width + 2)}${cellText(value)}`);
}

function cellText(value: unknown, maxWidth?: number): string {
  let text: string;
  if (value === null || value === undefined || value === '') text = '-';
  else if (Array.isArray(value)) text = value.length ? value.join(',') : '-';
  else text = String(value);
  text = visible(text);
  if (maxWidth && text.length > maxWidth) text = `${text.slice(0, maxWidth - 1)}…`;
  return text;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** `2026-05-01 12:00` from an ISO timestamp (UTC, as the API gives it). */
export function formatTime(iso: string | null | undefined): string {
  return iso ? iso.replace('T', ' ').slice(0, 16) : '-';
}
