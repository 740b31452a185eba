/**
 * The owner's decision on an action request (docs/design.md §21): approve or deny, once, with the
 * approval it spends, the history row and the events in one unit. The console decides through
 * decideApproval (src/domain/approvals.ts), which hands an approval of kind 'action' here; who may
 * decide and the fresh proof a decision needs are the console's rules.
 */
import type { Context } from '../../context.ts';
import { Conflict } from '../../errors.ts';
import type { ActionRequestRecord } from '../../store/action-requests.ts';
import type { ApprovalView } from '../../store/approvals.ts';
import type { AuditEvent } from '../../store/history.ts';
import { approvalDecided } from '../webhooks/events.ts';

/** What the console says when an action no longer waits for a decision. */
export const ACTION_NO_LONGER_WAITING =
  'This action no longer waits for a decision: it was decided already, or its request expired.';

/**
 * The sign-in history's outcomes of an action request (audit_events.outcome): asked of the owner,
 * decided by the owner or by the policy, expired undecided, its token issued.
 */
export const ACTION_OUTCOMES = {
  pending: 'action_pending',
  approved: 'action_approved',
  denied: 'action_denied',
  allowedByPolicy: 'action_allowed_by_policy',
  deniedByPolicy: 'action_denied_by_policy',
  issued: 'action_token_issued',
} as const;

/**
 * The history's row of one step of an action request: the website's, about its agent.
 *
 * @example
 * actionAudit(request, ACTION_OUTCOMES.approved, now);
 */
export function actionAudit(
  request: Pick<ActionRequestRecord, 'id' | 'agent_id' | 'client_id' | 'ip'>,
  outcome: string,
  at: number,
): AuditEvent {
  return {
    at,
    agent_id: request.agent_id,
    request_id: request.id,
    client_id: request.client_id,
    model: null,
    ip: request.ip,
    user_agent: null,
    outcome,
  };
}

/**
 * Decides an action's approval: 'approve' lets the website's next poll have tokens carrying the
 * approved authorization details, 'deny' answers it access_denied; a ping client is told either
 * way. `by` is the console account deciding.
 *
 * @throws Conflict when the approval or its action request no longer waits (decided, expired).
 * @example
 * const decided = await decideAction(ctx, approval, { decision: 'approve', by: account.id });
 * decided.status; // 'approved'
 */
export async function decideAction(
  ctx: Pick<Context, 'store' | 'clock'>,
  approval: ApprovalView,
  { decision, by }: { decision: 'approve' | 'deny'; by: string },
): Promise<ApprovalView> {
  const now = ctx.clock();
  const request = await ctx.store.actionRequests.find(approval.request_id);
  const waiting =
    approval.status === 'pending' &&
    approval.expires_at > now &&
    request?.status === 'pending' &&
    request.approval_id === approval.id &&
    request.expires_at > now;
  if (!request || !waiting) throw new Conflict(ACTION_NO_LONGER_WAITING);
  const status = decision === 'approve' ? 'approved' : 'denied';
  const decided: ApprovalView = {
    ...approval,
    status,
    decision: decision === 'approve' ? 'once' : 'deny',
    decided_at: now,
    decided_by: by,
    request_status: status,
  };
  const outcome = decision === 'approve' ? ACTION_OUTCOMES.approved : ACTION_OUTCOMES.denied;
  const won = await ctx.store.actionRequests.decide(
    request,
    approval,
    { status, by, now },
    actionAudit(request, outcome, now),
    [approvalDecided(decided)],
  );
  if (!won) throw new Conflict(ACTION_NO_LONGER_WAITING);
  return decided;
}
