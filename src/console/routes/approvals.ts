/**
 * The approvals area (docs/design.md §16): the list of sign-ins waiting for their owner, one
 * approval's page, and its decision. A decision needs a fresh proof made for it — the account's
 * password in the same post, or a passkey (user verification) answering a challenge made for
 * this approval and this decision — never a session alone. Only the agent's owner or an admin
 * sees or decides an approval; anyone else gets the page of a missing one.
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findAccount } from '../../domain/accounts.ts';
import { decideApproval } from '../../domain/approvals.ts';
import { scopeDescriptions } from '../../domain/resource-scopes.ts';
import { Conflict, InvalidField, TooManyRequests } from '../../errors.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type { ApprovalDecision, ApprovalKind, ApprovalView } from '../../store/approvals.ts';
import {
  approvalActionWords,
  approvalScopeWords,
  approvalSubject,
  decisionPurpose,
  decisionsOf,
  hostOf,
  isWaiting,
  pendingApprovals,
  reachableApproval,
  recentApprovals,
} from '../approvals.ts';
import { recordConsoleEvent } from '../events.ts';
import { approvalPage, approvalPath, approvalsPage } from '../pages/approvals.ts';
import { type ConsolePage, noticeFor } from '../pages/shell.ts';
import { listPasskeys, passkeyAnswerOf, reauthenticationOptions } from '../passkeys.ts';
import { confirmWithOwnPasskey, confirmWithPassword } from '../reauthentication.ts';
import { approvalEventRoutes } from './approval-events.ts';
import type { ConsoleScope, Form } from './scope.ts';

type Params = { id: string };

/** The console's audit action of each decision, a sign-in's and an action's. */
const ACTIONS: Record<ApprovalKind, Partial<Record<ApprovalDecision, string>>> = {
  sign_in: { once: 'approval.approve_once', always: 'approval.allow_always', deny: 'approval.deny' },
  action: { once: 'approval.approve_action', deny: 'approval.deny_action' },
};

/** The notice after each decision, a sign-in's and an action's. */
const NOTICES: Record<ApprovalKind, Partial<Record<ApprovalDecision, string>>> = {
  sign_in: { once: 'approval_approved', always: 'approval_allowed', deny: 'approval_denied' },
  action: { once: 'action_approved', deny: 'action_denied' },
};

/** The decision posted, if the approval offers it (an action has no "always"). */
const decisionOf = (raw: unknown, approval: Pick<ApprovalView, 'kind'>): ApprovalDecision => {
  if (typeof raw === 'string' && (decisionsOf(approval) as readonly string[]).includes(raw))
    return raw as ApprovalDecision;
  throw new InvalidField(
    'decision',
    approval.kind === 'action' ? 'Choose Approve or Deny.' : 'Choose Approve once, Always allow or Deny.',
  );
};

/** Why a decision came too late, in the approval's words. */
const tooLate = (approval: Pick<ApprovalView, 'kind'>) =>
  `This ${approvalSubject(approval)} was already decided or has expired.`;

/** How a decision was confirmed, as the activity records it. */
type Proof = 'passkey' | 'password';
const PROOF_WORDS: Record<Proof, string> = {
  passkey: 'confirmed with a passkey',
  password: 'confirmed with the password',
};

export function approvalRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

  approvalEventRoutes(scope, area);

  scope.get<{ Querystring: Form }>('/approvals', async (request, reply) => {
    const page = await area.page(request, reply);
    const [pending, recent] = await Promise.all([
      pendingApprovals(ctx, page.account),
      recentApprovals(ctx, page.account),
    ]);
    const scopeWords = await approvalScopeWords(ctx, pending);
    return area.send(
      reply,
      approvalsPage(page, {
        pending,
        recent,
        scopeWords,
        actionApprovals: ctx.config.actionApprovals,
        now: ctx.clock(),
        notice: noticeFor(request.query.notice),
      }),
    );
  });

  /** One approval's page, with a notice or the errors of a refused decision. */
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    approval: ApprovalView,
    state: { errors?: Record<string, string>; notice?: ConsolePage['notice'] } = {},
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const [passkeys, decider, scopeWords] = await Promise.all([
      listPasskeys(ctx, page.account),
      approval.decided_by === null ? undefined : findAccount(ctx, approval.decided_by),
      scopeDescriptions(ctx, approval.scope, approval.resource),
    ]);
    const decidedBy =
      approval.decided_by === null
        ? null
        : approval.decided_by === page.account.id
          ? 'you'
          : (decider?.name ?? decider?.email ?? 'an administrator');
    return area.send(
      reply,
      approvalPage(page, {
        approval,
        now: ctx.clock(),
        decidedBy,
        scopeWords,
        proof: { password: page.account.password_hash !== null, passkey: passkeys.length > 0 },
        ...state,
      }),
      status,
    );
  };

  scope.get<{ Params: Params; Querystring: Form }>('/approvals/:id', async (request, reply) => {
    const approval = await reachableApproval(ctx, area.account(request), request.params.id);
    return show(request, reply, approval, { notice: noticeFor(request.query.notice) });
  });

  /** The page of an approval that no longer waits, saying so (409). */
  const noLongerWaiting = async (request: FastifyRequest, reply: FastifyReply, id: string, description: string) => {
    const current = await reachableApproval(ctx, area.account(request), id);
    return show(request, reply, current, { notice: { kind: 'error', text: description } }, 409);
  };

  /**
   * Decides, once the proof is checked: the domain's rule, then the console's audit, which says
   * who decided what (the action in words), when, and with which proof.
   */
  const decide = async (
    request: FastifyRequest,
    account: AccountRecord,
    approval: ApprovalView,
    decision: ApprovalDecision,
    proof: Proof,
  ) => {
    await decideApproval(ctx, approval.id, decision, account.id);
    const what =
      approval.kind === 'action'
        ? `${approval.agent_name} (${approval.agent_id}) at ${approval.client_name}: ${approvalActionWords(approval).join('; ')}`
        : `${approval.agent_name} (${approval.agent_id}) → ${approval.client_name} (${hostOf(approval.redirect_uri)}), scope ${approval.scope}`;
    await recordConsoleEvent(
      ctx,
      account,
      ACTIONS[approval.kind][decision]!,
      approval.id,
      request.ip,
      `${what}; ${PROOF_WORDS[proof]}`,
    );
  };

  // A decision with the password in the same post (works without JavaScript).
  scope.post<{ Params: Params; Body: Form }>('/approvals/:id/decide', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    const approval = await reachableApproval(ctx, account, request.params.id);
    let decision: ApprovalDecision;
    try {
      decision = decisionOf(request.body?.decision, approval);
    } catch (error) {
      return show(request, reply, approval, { errors: { decision: (error as InvalidField).description } }, 400);
    }
    // Asked before the proof: a decided approval needs no password to say so.
    if (!isWaiting(approval, ctx.clock())) return noLongerWaiting(request, reply, approval.id, tooLate(approval));
    const password = request.body?.password ?? '';
    if (password === '') {
      const passkeyOnly = account.password_hash === null;
      return show(
        request,
        reply,
        approval,
        {
          errors: passkeyOnly
            ? { passkey: 'Confirm the decision with your passkey: its buttons need JavaScript in this browser.' }
            : { password: 'Enter your password to confirm the decision.' },
        },
        400,
      );
    }
    try {
      await confirmWithPassword(ctx, request.signedIn!, password, request.ip);
    } catch (error) {
      if (error instanceof InvalidField)
        return show(request, reply, approval, { errors: { password: error.description } }, 401);
      if (error instanceof TooManyRequests)
        return show(request, reply.headers(error.headers), approval, { errors: { password: error.description } }, 429);
      throw error;
    }
    try {
      await decide(request, account, approval, decision, 'password');
    } catch (error) {
      if (error instanceof Conflict) return noLongerWaiting(request, reply, approval.id, error.description);
      throw error;
    }
    return area.redirect(reply, `${approvalPath(approval.id)}?notice=${NOTICES[approval.kind][decision]}`);
  });

  // A decision with a passkey (console.js): a challenge made for this approval and decision…
  scope.post<{ Params: Params; Body: { decision?: unknown } }>(
    '/approvals/:id/passkey/options',
    { preHandler: guard },
    async (request, reply) => {
      const account = area.account(request);
      const approval = await reachableApproval(ctx, account, request.params.id);
      const decision = decisionOf(request.body?.decision, approval);
      if (!isWaiting(approval, ctx.clock())) throw new Conflict(tooLate(approval));
      return reply
        .header('cache-control', 'no-store')
        .send(await reauthenticationOptions(ctx, account, decisionPurpose(approval.id, decision)));
    },
  );

  // …and its answer, which decides.
  scope.post<{ Params: Params; Body: { challengeId?: unknown; response?: unknown; decision?: unknown } }>(
    '/approvals/:id/decide/passkey',
    { preHandler: guard, config: { webauthnResponse: true } },
    async (request, reply) => {
      const account = area.account(request);
      const approval = await reachableApproval(ctx, account, request.params.id);
      const decision = decisionOf(request.body?.decision, approval);
      const { challengeId, response } = passkeyAnswerOf<AuthenticationResponseJSON>(request.body);
      await confirmWithOwnPasskey(
        ctx,
        request.signedIn!,
        challengeId,
        response,
        request.ip,
        decisionPurpose(approval.id, decision),
      );
      await decide(request, account, approval, decision, 'passkey');
      return reply
        .header('cache-control', 'no-store')
        .send({ redirect: `${approvalPath(approval.id)}?notice=${NOTICES[approval.kind][decision]}` });
    },
  );
}
