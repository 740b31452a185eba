/**
 * Approvals in the console (docs/design.md §16): who may see and decide one (the agent's owner,
 * or an admin; anyone else is told it does not exist), what the navigation's badge counts, and
 * how an approval's state reads. Deciding itself is src/domain/approvals.ts's decideApproval,
 * after the fresh proof the routes ask for.
 */
import { createHash } from 'node:crypto';
import type { Context } from '../context.ts';
import { actionWords } from '../domain/action-words.ts';
import { isWaiting } from '../domain/approvals.ts';
import { scopeDescriptions } from '../domain/resource-scopes.ts';
import { NotFound } from '../errors.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { ApprovalDecision, ApprovalView } from '../store/approvals.ts';
import { possibleId } from '../management/reach.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/** The most pending approvals the list shows and the badge counts (the badge says "99+" past it). */
export const PENDING_LIMIT = 100;
/** How many decided (or expired) approvals the list shows below the pending ones. */
export const RECENT_LIMIT = 20;

export const DECISIONS: readonly ApprovalDecision[] = ['once', 'always', 'deny'];
/**
 * An action's decisions: approve it (stored as 'once') or deny it. No "always": standing answers
 * live in the agent's policy (docs/design.md §21), where the owner sees them all.
 */
export const ACTION_DECISIONS: readonly ApprovalDecision[] = ['once', 'deny'];

/**
 * The decisions an approval offers: a sign-in's three, an action's two.
 *
 * @example
 * decisionsOf({ kind: 'action' }); // ['once', 'deny']
 */
export const decisionsOf = (approval: Pick<ApprovalView, 'kind'>): readonly ApprovalDecision[] =>
  approval.kind === 'action' ? ACTION_DECISIONS : DECISIONS;

/**
 * An action's details in words, one line each (plain text; the pages escape it). [] for a sign-in.
 *
 * @example
 * approvalActionWords(approval); // ['Pay 20 EUR to Acme']
 */
export const approvalActionWords = (
  approval: Pick<ApprovalView, 'kind' | 'authorization_details' | 'client_action_types'>,
): string[] =>
  approval.kind === 'action' ? actionWords(approval.authorization_details, approval.client_action_types) : [];

/**
 * What an approval is about, in the console's words: "sign-in" or "action".
 *
 * @example
 * `This ${approvalSubject(approval)} was already decided.`; // 'This action was already decided.'
 */
export const approvalSubject = (approval: Pick<ApprovalView, 'kind'>) =>
  approval.kind === 'action' ? 'action' : 'sign-in';

/** What each resource scope an approval asks for allows, by scope, as its resource server registered it. */
export type ScopeWords = ReadonlyMap<string, string>;

/**
 * What the resource scopes of each approval allow, by approval id: the words the authorization
 * page shows (scopeDescriptions), so the owner decides on the same words as the person at the
 * browser. An approval asking only for the contract's scopes costs no read.
 *
 * @example
 * const words = await approvalScopeWords(ctx, [approval]);
 * words.get(approval.id)?.get('notes:read'); // 'Read your notes'
 */
export async function approvalScopeWords(
  deps: Pick<Context, 'store'>,
  approvals: ReadonlyArray<Pick<ApprovalView, 'id' | 'scope' | 'resource'>>,
): Promise<Map<string, ScopeWords>> {
  const described = await Promise.all(
    approvals.map(
      async (approval) => [approval.id, await scopeDescriptions(deps, approval.scope, approval.resource)] as const,
    ),
  );
  return new Map(described);
}

/** Whose approvals an account sees: its own agents', or every agent's for an admin. */
export const approvalsOwner = (actor: AccountRecord): string | null => (actor.role === 'admin' ? null : actor.id);

/**
 * The approval, if the account may see and decide it: the agent's owner or an admin. Anyone else
 * gets NotFound, exactly as for an approval that does not exist.
 *
 * @example
 * const approval = await reachableApproval(ctx, account, request.params.id); // or NotFound
 */
export async function reachableApproval(deps: Deps, actor: AccountRecord, id: string): Promise<ApprovalView> {
  const approval = possibleId(id) ? await deps.store.approvals.find(id) : undefined;
  if (!approval || (actor.role !== 'admin' && approval.agent_account_id !== actor.id))
    throw new NotFound('No such approval.');
  return approval;
}

/**
 * The approvals still waiting for a decision that the account sees, newest first.
 *
 * @example
 * const waiting = await pendingApprovals(ctx, account); // the badge shows waiting.length
 */
export function pendingApprovals(deps: Deps, actor: AccountRecord, limit = PENDING_LIMIT): Promise<ApprovalView[]> {
  return deps.store.approvals.list({ accountId: approvalsOwner(actor), status: 'pending', now: deps.clock(), limit });
}

/**
 * The approvals decided, expired, cancelled or ended that the account sees, newest first.
 *
 * @example
 * const recent = await recentApprovals(ctx, account); // below the waiting ones on /console/approvals
 */
export async function recentApprovals(deps: Deps, actor: AccountRecord): Promise<ApprovalView[]> {
  const now = deps.clock();
  // Pending ones are listed above; the rest (decided, or expired unanswered) fill the recent list.
  const all = await deps.store.approvals.list({ accountId: approvalsOwner(actor), now, limit: PENDING_LIMIT });
  return all.filter((approval) => !isWaiting(approval, now)).slice(0, RECENT_LIMIT);
}

// Whether an approval can still be decided: the domain's rule, handed on to the console's pages,
// which may not import the domain themselves (docs/layout.md).
export { isWaiting };

/**
 * An approval's state in words: "Waiting", "Approved once", "Always allowed", "Denied", "Expired",
 * "Cancelled" (at the browser, before anyone decided) or "Ended" (its request ended another way).
 *
 * @example
 * approvalState({ status: 'approved', decision: 'always', expires_at: 0, request_status: 'completed' }, now); // 'Always allowed'
 */
export function approvalState(
  approval: Pick<ApprovalView, 'status' | 'decision' | 'expires_at' | 'request_status'> &
    Partial<Pick<ApprovalView, 'kind'>>,
  now: number,
): string {
  if (approval.status === 'pending') {
    if (approval.expires_at <= now) return 'Expired';
    return approval.request_status === 'pending' ? 'Waiting' : 'Ended';
  }
  if (approval.status === 'cancelled') return 'Cancelled';
  if (approval.status === 'denied') return 'Denied';
  if (approval.kind === 'action') return 'Approved';
  return approval.decision === 'always' ? 'Always allowed' : 'Approved once';
}

/** The website's host, from the request's redirect URI. */
export const hostOf = (redirectUri: string): string => {
  try {
    return new URL(redirectUri).host;
  } catch {
    return redirectUri;
  }
};

/**
 * Time left, as people say it (console.js says it the same way as the time passes).
 *
 * @example
 * timeLeft(now + 600, now); // '10 minutes left'
 * timeLeft(now + 30, now);  // 'less than a minute left'
 */
export function timeLeft(expiresAt: number, now: number): string {
  const seconds = expiresAt - now;
  if (seconds <= 0) return 'expired';
  if (seconds < 60) return 'less than a minute left';
  const minutes = Math.floor(seconds / 60);
  return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'} left`;
}

/** The purpose a passkey's challenge is made for when it confirms a decision (src/console/passkeys.ts). */
export const decisionPurpose = (approvalId: string, decision: ApprovalDecision) => `approval ${approvalId} ${decision}`;

/**
 * What the waiting approvals are, in a few characters: it changes whenever one arrives, is
 * decided or expires, so console.js knows when its lists are out of date.
 *
 * @example
 * approvalsVersion([]); // 'e3b0c44298fc'
 */
export function approvalsVersion(pending: Array<Pick<ApprovalView, 'id'>>): string {
  return createHash('sha256')
    .update(pending.map((approval) => approval.id).join(','))
    .digest('hex')
    .slice(0, 12);
}
