/** Outstanding setup and invitation links as a table with a Revoke button each: the account page and the admin's. */
import { type Html, html } from '../../web/html.ts';
import type { OutstandingLink } from '../../domain/account-links.ts';
import { actionButton, when } from './shell.ts';
import { dataTable } from './table.ts';

export interface LinkTableOptions {
  caption: string;
  /** Where a row's Revoke button posts, by link id. */
  revokeAction: (id: string) => string;
  /** A "Made by" column (the admin's table). */
  showCreator?: boolean;
}

/** An email that may wrap after its @ (and nowhere else unless it must), so that short ones stay whole. */
function email(address: string): Html {
  const at = address.lastIndexOf('@');
  return at < 0 ? html`${address}` : html`${address.slice(0, at + 1)}<wbr>${address.slice(at + 1)}`;
}

function what(entry: OutstandingLink): Html {
  return entry.link.purpose === 'setup'
    ? html`Setup link`
    : html`Invitation <span class="muted">(${entry.link.role ?? 'member'})</span>`;
}

/** Whom the link lets in: the account of a setup link, anyone holding an invitation. */
function forWhom(entry: OutstandingLink): Html {
  if (entry.link.purpose === 'invite') return html`<span class="muted">whoever opens it</span>`;
  return entry.forAccount ? email(entry.forAccount.email) : html`<code class="muted">${entry.link.account_id}</code>`;
}

function madeBy(entry: OutstandingLink): Html {
  if (entry.link.created_by === null) return html`<span class="muted">CLI</span>`;
  return entry.creator ? email(entry.creator.email) : html`<code class="muted">${entry.link.created_by}</code>`;
}

/**
 * The links, oldest first; no token (it is not stored), only what each is and whom it lets in.
 *
 * @example
 * linkTable(csrf, links, { caption: 'Your unused links', revokeAction: (id) => `/console/account/links/${id}/revoke` })
 */
export function linkTable(csrf: string, links: OutstandingLink[], options: LinkTableOptions): Html {
  return dataTable({
    caption: options.caption,
    rows: links,
    rowAttributes: (entry) => html` id="link-${entry.id}"`,
    columns: [
      { heading: 'Link', kind: 'title', cell: what },
      { heading: 'For', kind: 'long', cell: forWhom },
      options.showCreator === true && { heading: 'Made by', kind: 'long', cell: madeBy },
      { heading: 'Created', cell: (entry) => when(entry.link.created_at) },
      { heading: 'Expires', cell: (entry) => when(entry.link.expires_at) },
      {
        heading: 'Actions',
        kind: 'actions',
        cell: (entry) =>
          actionButton(csrf, options.revokeAction(entry.id), 'Revoke', {
            danger: true,
            confirm:
              entry.link.purpose === 'setup'
                ? 'Revoke this setup link? It stops working.'
                : 'Revoke this invitation? The link stops working.',
          }),
      },
    ],
  });
}
