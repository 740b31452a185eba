/**
 * Approval on first use (docs/design.md §16): an agent whose policy says "ask me" authenticates for
 * a website it has not used; the request is held for its owner, who approves once, approves
 * always (the website joins the agent's list) or denies. An approval is bound to one request,
 * agent and website and is decided once. Approving moves the request to `authenticated` exactly
 * as the agent's own authentication would, so the agent's usual wait (push or check-status)
 * completes the sign-in without its credentials being sent again.
 *
 * Who may decide (the agent's owner, or an admin) and the fresh proof a decision needs are the
 * console's rules; this module is given the deciding account.
 */
import type { Context } from '../context.ts';
import { newApprovalId } from '../crypto.ts';
import { Conflict, NotFound } from '../errors.ts';
import type { AgentRecord } from '../store/agents.ts';
import type { ClientRecord } from '../store/clients.ts';
import type { AuditEvent } from '../store/history.ts';
import type { AuthorizationRequestRecord } from '../store/requests.ts';
import type { ApprovalRecord, ApprovalView } from '../store/approvals.ts';
import { decideAction } from './action-requests/decide.ts';
import { actionSummary, actionWords } from './action-words.ts';
import { policyOf } from './agent-policy.ts';
import { scopeDescriptions } from './resource-scopes.ts';
import { scopeValues } from './scopes.ts';
import { approvalDecided, approvalRequested, signInFailed, signInSucceeded } from './webhooks/events.ts';

/** What the request says once its owner denied it (the website and the browser read it too: no names). */
export const DENIED_DESCRIPTION = "The agent's owner denied this sign-in.";

export const NO_LONGER_WAITING =
  'This sign-in no longer waits for a decision: it was decided already, its request expired or ended, or another agent signed in.';

/**
 * Whether an approval can still be decided: pending, its request not yet expired, and (when the
 * request's status was read along, as every view of an approval has it) still pending itself:
 * a request cancelled, or ended any other way, ends the wait.
 *
 * @example
 * isWaiting(approval, ctx.clock()); // false once decided, expired, cancelled or ended
 */
export const isWaiting = (
  approval: Pick<ApprovalRecord, 'status' | 'expires_at'> & { request_status?: string },
  now: number,
): boolean =>
  approval.status === 'pending' &&
  approval.expires_at > now &&
  (approval.request_status === undefined || approval.request_status === 'pending');

/** What an agent asking its owner brings: the records at hand and where its call came from. */
export interface ApprovalAsk {
  agent: AgentRecord;
  request: AuthorizationRequestRecord;
  client: ClientRecord;
  model: string;
  ip: string;
  userAgent: string | null;
}

/** Where a failure nobody waits for is reported: the HTTP request's logger, say. */
export interface WarningLog {
  warn(details: object, message: string): void;
}

/**
 * Asks the agent's owner: holds the request for them, or finds the hold this agent already has
 * on it (an agent that asks again gets the same approval), and mails them (mailOwner) without
 * waiting. Undefined when the request is not free: another agent's approval holds it, or it is
 * no longer pending (the caller reports why, as for a lost authentication).
 *
 * @example
 * const approval = await askOwner(ctx, { agent, request, client, model, ip, userAgent }, request.log);
 * approval?.status; // 'pending'
 */
export async function askOwner(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'mailer'>,
  ask: ApprovalAsk,
  log: WarningLog,
): Promise<ApprovalRecord | undefined> {
  const approval = await holdRequest(ctx, ask);
  // The owner hears of it at once; a mail that fails is logged, never the agent's problem.
  if (approval)
    mailOwner(ctx, approvalView(approval, ask), ask.agent).catch((error: unknown) =>
      log.warn({ err: error, approval_id: approval.id }, 'could not mail the owner about an approval'),
    );
  return approval;
}

/** The request held for the owner by a new approval, or the hold this agent has on it already. */
async function holdRequest(
  ctx: Pick<Context, 'store' | 'clock'>,
  ask: ApprovalAsk,
): Promise<ApprovalRecord | undefined> {
  const { agent, request, client } = ask;
  if (request.approval_id !== null) return heldBy(ctx, request.approval_id, agent.id);
  const now = ctx.clock();
  const approval: ApprovalRecord = {
    id: newApprovalId(),
    kind: 'sign_in',
    request_id: request.id,
    agent_id: agent.id,
    client_id: client.id,
    model: ask.model,
    scope: request.scope,
    ip: ask.ip,
    user_agent: ask.userAgent?.slice(0, 512) ?? null,
    status: 'pending',
    decision: null,
    created_at: now,
    expires_at: request.expires_at,
    decided_at: null,
    decided_by: null,
  };
  const audit = auditOf(approval, 'approval_pending', now);
  if (await ctx.store.approvals.open(approval, audit, [approvalRequested(approvalView(approval, ask))]))
    return approval;
  // Lost to a concurrent hold: the same agent asking twice at once gets the one that won.
  const current = await ctx.store.requests.find(request.id);
  return current?.approval_id ? heldBy(ctx, current.approval_id, agent.id) : undefined;
}

async function heldBy(
  ctx: Pick<Context, 'store' | 'clock'>,
  approvalId: string,
  agentId: string,
): Promise<ApprovalRecord | undefined> {
  const held = await ctx.store.approvals.find(approvalId);
  return held && held.agent_id === agentId && isWaiting(held, ctx.clock()) ? held : undefined;
}

/**
 * The owner's decision: 'once' and 'always' authenticate the request as the agent (with the
 * model it named), 'always' also adds the website to the agent's list; 'deny' ends the request
 * in error. `decidedBy` is the console account deciding (the console checks it may). An action's
 * approval (kind 'action') is decided by decideAction: 'once' and 'always' approve the action.
 *
 * @throws NotFound when there is no such approval; Conflict when it no longer waits.
 * @example
 * const decided = await decideApproval(ctx, 'apr_…', 'once', account.id);
 * decided.status; // 'approved'
 */
export async function decideApproval(
  ctx: Pick<Context, 'store' | 'clock'>,
  approvalId: string,
  decision: 'once' | 'always' | 'deny',
  decidedBy: string,
): Promise<ApprovalView> {
  const approval = await ctx.store.approvals.find(approvalId);
  if (!approval) throw new NotFound('No such approval.');
  // An action's approval decides its action request instead (docs/design.md §21).
  if (approval.kind === 'action')
    return decideAction(ctx, approval, { decision: decision === 'deny' ? 'deny' : 'approve', by: decidedBy });
  const now = ctx.clock();
  if (!isWaiting(approval, now)) throw new Conflict(NO_LONGER_WAITING);
  const decided: ApprovalView = {
    ...approval,
    status: decision === 'deny' ? 'denied' : 'approved',
    decision,
    decided_at: now,
    decided_by: decidedBy,
  };

  if (decision === 'deny') {
    const won = await ctx.store.approvals.deny(
      approval,
      { by: decidedBy, now, description: DENIED_DESCRIPTION },
      // Its own outcome in the history: unlike a policy's refusal, it ended the website's request.
      auditOf(approval, 'approval_denied', now),
      [signInFailed({ ...approval }, approval.client_id, 'access_denied'), approvalDecided(decided)],
    );
    if (!won) throw new Conflict(NO_LONGER_WAITING);
    return decided;
  }

  // 'always' adds the website to the policy as read: if the agent changed in between (another
  // website added or removed), the unit is void and the policy is read again, so both changes stay.
  for (let attempt = 1; ; attempt++) {
    const { agent, found } = await ctx.store.requests.findWithAgent(approval.agent_id, approval.request_id);
    if (!agent || !found) throw new Conflict(NO_LONGER_WAITING);
    if (agent.status !== 'active') throw new Conflict('The agent has been disabled since it asked: enable it first.');
    if (found.client?.status !== 'active') throw new Conflict('The website is no longer active.');
    const policy = policyOf(agent);
    const always =
      decision === 'always' && !policy.allowed_clients.includes(approval.client_id)
        ? { ...policy, allowed_clients: [...policy.allowed_clients, approval.client_id] }
        : undefined;
    const won = await ctx.store.approvals.approve(
      approval,
      { decision, by: decidedBy, now, ...(always ? { policy: { policy: always, version: agent.version } } : {}) },
      auditOf(approval, 'authenticated', now),
      [signInSucceeded(found.request, agent, found.client, approval.model), approvalDecided(decided)],
    );
    if (won) return decided;
    const current = always && attempt < ALWAYS_ATTEMPTS ? await ctx.store.approvals.find(approvalId) : undefined;
    if (!current || !isWaiting(current, ctx.clock())) throw new Conflict(NO_LONGER_WAITING);
  }
}

/** How many times an 'always' is tried on a fresh read of the policy (as the policy's own changes are). */
const ALWAYS_ATTEMPTS = 20;

/**
 * The mail to the agent's owner about a new approval, where SMTP is configured and the owner's
 * address is known to be theirs (a console account's, or verified): otherwise anyone could have
 * agentauth mail a stranger by naming them an agent's owner.
 *
 * @example
 * void mailOwner(ctx, view, { agentOwnerVerified: true }).catch((error) => log.warn({ err: error }, 'approval mail failed'));
 */
export async function mailOwner(
  ctx: Pick<Context, 'config' | 'mailer' | 'store'>,
  approval: ApprovalView,
  owner: Pick<AgentRecord, 'account_id' | 'owner_email_verified'>,
): Promise<boolean> {
  const mailer = ctx.mailer;
  if (!mailer || (owner.account_id === null && !owner.owner_email_verified)) return false;
  const minutes = Math.max(1, Math.round((approval.expires_at - approval.created_at) / 60));
  if (approval.kind === 'action') {
    await mailer.send(actionMail(ctx.config.baseUrl, approval, minutes));
    return true;
  }
  // Each resource scope in the words the authorization page says it in (plain text: a mail has no markup).
  const words = await scopeDescriptions(ctx, approval.scope, approval.resource);
  const asked = scopeValues(approval.scope)
    .map((scope) => (words.has(scope) ? `${scope} (${words.get(scope)})` : scope))
    .join(' ');
  await mailer.send({
    to: approval.owner_email,
    subject: `Approve ${approval.agent_name} signing in to ${approval.client_name}?`,
    text: [
      `Your agent ${approval.agent_name} (model ${approval.model}) is signing in to ${approval.client_name}`,
      `(${hostOf(approval.redirect_uri)}) for the first time, asking for: ${asked}.`,
      '',
      `Approve or deny it within ${minutes} minutes:`,
      `${ctx.config.baseUrl}/console/approvals/${approval.id}`,
      '',
      'If you did not expect this, deny it: nothing is shared until you approve.',
    ].join('\n'),
  });
  return true;
}

/** The longest subject an action's mail has: the action's words are cut to fit. */
const SUBJECT_LENGTH = 150;

/**
 * The mail about an action (docs/design.md §21): the website's question in words, and its
 * binding message quoted as the website's own words, never as agentauth's.
 */
function actionMail(baseUrl: string, approval: ApprovalView, minutes: number) {
  const words = actionWords(approval.authorization_details, approval.client_action_types);
  const summary = actionSummary(words);
  const subject = `Approve ${approval.agent_name} at ${approval.client_name}: ${summary}?`;
  return {
    to: approval.owner_email,
    subject: subject.length > SUBJECT_LENGTH ? `${subject.slice(0, SUBJECT_LENGTH - 2)}…?` : subject,
    text: [
      `${approval.client_name} asks whether your agent ${approval.agent_name} may:`,
      ...words.map((each) => `  ${each}`),
      ...(approval.binding_message === null
        ? []
        : [
            '',
            `${approval.client_name} says: "${approval.binding_message}"`,
            '(the website’s own words: agentauth did not write or check them)',
          ]),
      '',
      `Approve or deny it within ${minutes} minutes, with your passkey or password:`,
      `${baseUrl}/console/approvals/${approval.id}`,
      '',
      'If you did not expect this, deny it: nothing happens until you approve.',
    ].join('\n'),
  };
}

/** An approval with the names and destination its owner is shown, from the records at hand. */
export function approvalView(
  approval: ApprovalRecord,
  records: { agent: AgentRecord; request: AuthorizationRequestRecord; client: ClientRecord },
): ApprovalView {
  return {
    ...approval,
    agent_name: records.agent.name,
    agent_account_id: records.agent.account_id,
    owner_email: records.agent.owner_email,
    owner_name: records.agent.owner_name,
    client_name: records.client.name,
    redirect_uri: records.request.redirect_uri,
    resource: records.request.resource,
    request_status: records.request.status,
    binding_message: null,
    authorization_details: null,
    client_action_types: records.client.action_types,
  };
}

/** The sign-in history's row of an approval's step, as the agent's own attempt would be recorded. */
function auditOf(approval: ApprovalRecord, outcome: string, at: number): AuditEvent {
  return {
    at,
    agent_id: approval.agent_id,
    request_id: approval.request_id,
    client_id: approval.client_id,
    model: approval.model,
    ip: approval.ip,
    user_agent: approval.user_agent,
    outcome,
  };
}

const hostOf = (uri: string) => new URL(uri).host;
