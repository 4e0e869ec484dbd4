import { stringify } from 'csv-stringify/sync';

/** A cell a spreadsheet would read as a formula: `=`, `+`, `-`, `@`, tab or carriage return first. */
const FORMULA = /^[=+\-@\t\r]/;

/**
 * A text cell made safe for spreadsheets (OWASP's CSV injection advice): one that would start a
 * formula gets a leading apostrophe, so it is shown as the text it is. Numbers are numbers: a
 * negative amount stays a number.
 */
export const safeCell = (v: string | number | boolean | null | undefined): string | number | boolean | null =>
  typeof v === 'string' && FORMULA.test(v) ? `'${v}` : (v ?? null);

/** Rows as CSV (RFC 4180: quoted where needed, CRLF line ends), every text cell formula-safe, header first. */
export function toCsv(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | boolean | null | undefined>>): string {
  return stringify([header as string[], ...rows.map((r) => r.map(safeCell))], { record_delimiter: '\r\n' });
}
