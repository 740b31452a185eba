/** How the benchmark writes its figures: numbers to a fixed precision, and aligned tables. */

/**
 * A figure in `digits` decimals (by default 0 from 100 up, 1 from 10 up, else 2); "—" for none.
 *
 * @example
 * number(0.0534, 3); // '0.053'
 * number(1234.5);    // '1,235'
 */
export const number = (n: number | undefined, digits?: number) => {
  if (n === undefined || !Number.isFinite(n)) return '—';
  const d = digits ?? (n >= 100 ? 0 : n >= 10 ? 1 : 2);
  return n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
};

/**
 * Rows as columns: the first left-aligned, the others right-aligned, three spaces apart.
 *
 * @example
 * table([['figure', 'ms'], ['flow', '0.66']]);
 */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('   '))
    .join('\n');
}
