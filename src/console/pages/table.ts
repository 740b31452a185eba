/**
 * Every table of the console, laid out for the width it gets (agentauth.css, "Tables"): columns
 * on a wide screen, wrapping long values rather than scrolling; on a phone each row is a card
 * whose cells carry their column's name (data-label). Nothing scrolls sideways at either size.
 */
import { type Html, html } from '../../web/html.ts';
import { describeUserAgent } from '../user-agents.ts';

export interface Column<Row> {
  heading: string;
  cell(row: Row): Html | string | number | null | undefined;
  /**
   * title: the row's name, the card's heading on a phone (no label); actions: its buttons (no
   * label on a phone, wrapping on a wide screen); long: text that may break anywhere (ids, user
   * agents); narrow: a short value (counts, status) kept on one line.
   */
  kind?: 'title' | 'actions' | 'long' | 'narrow';
}

export interface TableOptions<Row> {
  /** Read by screen readers (the caption is visually hidden: a heading names the table). */
  caption: string;
  columns: Array<Column<Row> | false>;
  rows: Row[];
  id?: string;
  /** Attributes of a row's <tr> (` id="…"`, ` data-event="…"`). */
  rowAttributes?(row: Row): Html;
}

/**
 * @example
 * dataTable({ caption: 'Your passkeys', rows: passkeys, columns: [
 *   { heading: 'Name', kind: 'title', cell: (p) => p.name },
 *   { heading: 'Added', cell: (p) => when(p.created_at) },
 * ] })
 */
export function dataTable<Row>(options: TableOptions<Row>): Html {
  const columns = options.columns.filter((column): column is Column<Row> => column !== false);
  return html`<table class="data"${options.id ? html` id="${options.id}"` : ''}>
<caption class="visually-hidden">${options.caption}</caption>
<thead><tr>${columns.map((column) => html`<th scope="col"${column.kind ? html` class="${column.kind}"` : ''}>${column.heading}</th>`)}</tr></thead>
<tbody>
${options.rows.map(
  (row) => html`<tr${options.rowAttributes?.(row)}>
${columns.map((column) => html`<td data-label="${column.heading}"${column.kind ? html` class="${column.kind}"` : ''}>${column.cell(row)}</td>`)}
</tr>
`,
)}
</tbody>
</table>`;
}

/** A User-Agent as people read it ("Chrome 131 on Linux"), the raw header on demand. */
export function userAgentCell(raw: string | null | undefined): Html {
  if (!raw) return html`<span class="muted">unknown</span>`;
  const label = describeUserAgent(raw);
  if (label === raw) return html`${raw}`;
  return html`<details class="raw"><summary>${label}</summary><code>${raw}</code></details>`;
}
