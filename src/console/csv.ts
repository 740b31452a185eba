/**
 * CSV for spreadsheets (RFC 4180), safe to open: every cell is quoted, and a cell that a
 * spreadsheet would read as a formula (starting with = + - @, a tab, a carriage return or NUL; OWASP and ASVS 1.2.10) gets a
 * leading apostrophe, as OWASP's "CSV Injection" advises. Histories carry text that callers chose
 * (user agents, model names), so a row must never become a formula.
 */

const FORMULA_START = /^[=+\-@\t\r\0]/;

/** One cell, quoted. */
export function csvCell(value: string | number | null | undefined): string {
  const text = value === null || value === undefined ? '' : String(value);
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  return `"${safe.replaceAll('"', '""')}"`;
}

/** One record, ended by CRLF (RFC 4180). */
export function csvLine(values: Array<string | number | null | undefined>): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
