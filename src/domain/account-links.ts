/**
 * Outstanding setup and invitation links (docs/design.md §11): listed to the person who made
 * them and to admins, revoked by either, and ended when their creator's account is disabled.
 * A link is named in URLs by linkId, never by its token (not stored) nor by its digest (the
 * key it is found by).
 */
import { createHash } from 'node:crypto';
import type { Context } from '../context.ts';
import type { AccountLinkRecord, AccountRecord } from '../store/accounts.ts';
import { NotFound } from '../errors.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/** What a revoked link answers, and one whose creator's account is no longer active. */
export const LINK_REVOKED = 'This link was revoked. Ask the person who sent it for a new one.';

const NO_SUCH_LINK = 'There is no such link, or it was already used, revoked or expired.';
const LINK_ID = /^[0-9a-f]{16}$/;

/**
 * A link's public handle: the first 16 hex characters of the SHA-256 of its digest. One-way, so
 * it gives away neither the token nor the digest, and derived, so no column holds it.
 *
 * @example
 * linkId({ digest: 'q4Qv…' }) // 'a3f09c1e5b7d2468'
 */
export function linkId(link: Pick<AccountLinkRecord, 'digest'>): string {
  return createHash('sha256').update(link.digest, 'utf8').digest('hex').slice(0, 16);
}

/**
 * Whether the link's creator still vouches for it: a link made by the CLI has none; one made
 * by an account works only while that account is active.
 */
export async function creatorActive(deps: Pick<Context, 'store'>, link: AccountLinkRecord): Promise<boolean> {
  if (link.created_by === null) return true;
  return (await deps.store.accounts.find(link.created_by))?.status === 'active';
}

/** Disabling an account ends the links it made and the setup links made for it. */
export function endLinksOf(deps: Deps, accountId: string): Promise<number> {
  return deps.store.links.revokeAll(accountId, deps.clock());
}

/** An outstanding link as the console lists it. */
export interface OutstandingLink {
  id: string;
  link: AccountLinkRecord;
  /** Who made it; null for the CLI. */
  creator: AccountRecord | null;
  /** The account a setup link signs in; null for an invitation. */
  forAccount: AccountRecord | null;
}

/**
 * The setup and invitation links still outstanding, oldest first: those `createdBy` made, or
 * (for an admin) every one.
 */
export async function outstandingLinks(deps: Deps, createdBy?: string): Promise<OutstandingLink[]> {
  const links = await deps.store.links.listOutstanding(deps.clock(), createdBy);
  const ids = new Set(
    links.flatMap((link) => [link.created_by, link.account_id]).filter((id): id is string => id !== null),
  );
  const accounts = new Map<string, AccountRecord>();
  await Promise.all(
    [...ids].map(async (id) => {
      const account = await deps.store.accounts.find(id);
      if (account) accounts.set(id, account);
    }),
  );
  const account = (id: string | null) => (id === null ? null : (accounts.get(id) ?? null));
  return links.map((link) => ({
    id: linkId(link),
    link,
    creator: account(link.created_by),
    forAccount: account(link.account_id),
  }));
}

/**
 * Revokes the outstanding link with this id: one the person made (`createdBy`), or any one (an
 * admin). Another person's link answers as a missing one: NotFound.
 */
export async function revokeOutstandingLink(deps: Deps, id: string, createdBy?: string): Promise<AccountLinkRecord> {
  const link = LINK_ID.test(id)
    ? (await deps.store.links.listOutstanding(deps.clock(), createdBy)).find((candidate) => linkId(candidate) === id)
    : undefined;
  if (!link || !(await deps.store.links.revoke(link.digest, deps.clock(), createdBy))) throw new NotFound(NO_SUCH_LINK);
  return link;
}
