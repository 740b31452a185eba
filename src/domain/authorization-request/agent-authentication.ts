/**
 * POST /api/agent/authenticate: the agent's authentication, pending → authenticated
 * (docs/design.md §5), or held for its owner when its policy asks (§16).
 */
import type { Context } from '../../context.ts';
import {
  AccessDenied,
  AgentMismatch,
  InvalidClient,
  InvalidCredentials,
  InvalidRequest,
  type OAuthError,
  RequestAlreadyUsed,
  RequestContested,
  RequestExpired,
  RequestMismatch,
} from '../../errors.ts';
import type { AgentRecord, ApprovalRecord, AuthorizationRequestRecord, ClientRecord } from '../../store/types.ts';
import { Throttled } from '../../throttle/agent-authentication.ts';
import { decideSignIn } from '../agent-policy.ts';
import { verifyAgentCredentials } from '../agents.ts';
import { askOwner } from '../approvals.ts';
import { redirectUriMatches } from '../clients.ts';
import { signInFailed, signInSucceeded } from '../webhooks/events.ts';
import { CONTESTED_DESCRIPTION, EXPIRED_DESCRIPTION, isExpired, NO_LONGER_REGISTERED } from './state.ts';
import { redirectHost } from './status.ts';

export interface AgentAuthentication {
  request_id: string;
  agent_id: string;
  /** An agent with a secret presents it; a key-bound agent presents agent_assertion instead (exactly one). */
  agent_secret?: string;
  /** A key-bound agent's signed assertion (docs/design.md §16), instead of agent_secret. */
  agent_assertion?: string;
  model: string;
  /** The client the agent expects to sign in to; a different one is refused (412). */
  expected_client_id?: string;
  /** The host (and port) the agent expects the browser to be sent to; a different one is refused (412). */
  expected_redirect_host?: string;
  /** The resource (RFC 8707) the agent expects the tokens to be for; a request for another, or for none, is refused (412). */
  expected_resource?: string;
}

export interface CallerInfo {
  ip: string;
  userAgent: string | null;
}

/** What an agent's authentication came to: signed in, or held for its owner's approval. */
export type AuthenticationOutcome =
  | { kind: 'authenticated'; agent: AgentRecord; client: ClientRecord }
  | {
      kind: 'approval_pending';
      agent: AgentRecord;
      client: ClientRecord;
      request: AuthorizationRequestRecord;
      approval: ApprovalRecord;
    };

/**
 * pending → authenticated (docs/design.md §5). Checks, in order: the client address's throttle
 * (429), credentials (401, the same for unknown agent, wrong secret and disabled agent; 429
 * instead once the agent_id has had too many wrong secrets), request exists (404), request's
 * client still active (400), the agent's expectations (412), login_hint (403), the agent's
 * policy (403 access_denied, or held for the owner: approval_pending; docs/design.md §16),
 * request state (400 request_expired, 409 request_already_used or request_contested). Every
 * attempt is an audit event, except that a throttled key writes one per window.
 */
export async function authenticateAgent(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
): Promise<AuthenticationOutcome> {
  const auditEvent = (outcome: string, clientId: string | null = null) => ({
    at: ctx.clock(),
    agent_id: input.agent_id,
    request_id: input.request_id,
    client_id: clientId,
    model: input.model,
    ip: caller.ip,
    user_agent: caller.userAgent?.slice(0, 512) ?? null,
    outcome,
  });
  // Each failure's audit event and its webhook (agent.sign_in.failed) commit together.
  const audit = (outcome: string, clientId: string | null = null) => {
    const event = auditEvent(outcome, clientId);
    return ctx.store.recordAuditEvent(event, [signInFailed(input, event.client_id, outcome)]);
  };
  const refuse = async (error: Throttled): Promise<never> => {
    if (error.firstInWindow) await audit('throttled');
    throw error;
  };
  const fail = async (error: OAuthError, clientId: string | null = null): Promise<never> => {
    await ctx.throttle.recordFailure(caller.ip);
    await audit(error.error, clientId);
    throw error;
  };

  // The agent and the request (with its client) in one read, with the client address's failures
  // where the store keeps them (PostgreSQL); the rules below still run in order, the throttle first.
  const read = await ctx.store.findAgentAndRequest(
    input.agent_id,
    input.request_id,
    ctx.throttle.storedKeyOf(caller.ip),
  );
  try {
    await ctx.throttle.checkClient(caller.ip, read.failures);
  } catch (error) {
    if (error instanceof Throttled) return refuse(error);
    throw error;
  }
  const agent = await verifyAgentCredentials(ctx, read.agent, input);
  if (!agent) {
    const throttled = await ctx.throttle.recordWrongCredentials(input.agent_id, caller.ip);
    if (throttled) return refuse(throttled);
    await audit('invalid_credentials');
    throw new InvalidCredentials('The agent credentials are invalid.');
  }

  const { found } = read;
  if (!found) return fail(new InvalidRequest('The authorization request does not exist.', 404));
  const { request, client } = found;
  if (client?.status !== 'active')
    return fail(
      new InvalidClient('The client of this authorization request is no longer active.', 400),
      request.client_id,
    );
  if (!redirectUriMatches(client, request.redirect_uri))
    return fail(new InvalidRequest(NO_LONGER_REGISTERED), request.client_id);

  // Refused before any state change: the agent was handed a request for a site it did not expect.
  if (input.expected_client_id !== undefined && input.expected_client_id !== request.client_id) {
    return fail(
      new RequestMismatch(
        `This authorization request is for client ${request.client_id}, not ${input.expected_client_id}.`,
      ),
      request.client_id,
    );
  }
  const host = redirectHost(request);
  if (input.expected_redirect_host !== undefined && input.expected_redirect_host.toLowerCase() !== host.toLowerCase()) {
    return fail(
      new RequestMismatch(
        `This authorization request sends the browser to ${host}, not ${input.expected_redirect_host}.`,
      ),
      request.client_id,
    );
  }
  if (input.expected_resource !== undefined && input.expected_resource !== request.resource) {
    const named = request.resource === null ? 'names no resource' : `is for the resource ${request.resource}`;
    return fail(
      new RequestMismatch(`This authorization request ${named}, not ${input.expected_resource}.`),
      request.client_id,
    );
  }
  if (request.login_hint !== null && request.login_hint !== agent.id) {
    return fail(
      new AgentMismatch('This authorization request was started for another agent (login_hint).'),
      request.client_id,
    );
  }

  /** Lost the conditional update (or the hold): tell the caller why from the row as it is now. */
  const whyNotAuthenticated = async (now: number): Promise<never> => {
    const current = (await ctx.store.findRequest(request.id)) ?? request;
    if (isExpired(current, ctx.clock())) return fail(new RequestExpired(EXPIRED_DESCRIPTION), request.client_id);
    if (current.status === 'pending' && current.approval_id !== null)
      return fail(
        new RequestAlreadyUsed('The authorization request is waiting for an owner to approve another sign-in.'),
        request.client_id,
      );
    if (current.status === 'authenticated' && current.agent_id !== agent.id) {
      // Someone else's agent got there first (a leaked request_id) or this one did: either way the
      // browser must not be signed in as whichever came first. No code is released.
      if (
        await ctx.store.contestRequest(
          request.id,
          agent.id,
          now,
          CONTESTED_DESCRIPTION,
          auditEvent('request_contested', request.client_id),
        )
      ) {
        await ctx.throttle.recordFailure(caller.ip);
        throw new RequestContested(CONTESTED_DESCRIPTION);
      }
    }
    return fail(
      new RequestAlreadyUsed(
        'The authorization request has already been used; an authorization request can be authenticated only once.',
      ),
      request.client_id,
    );
  };

  // The owner's policy, before any state change; an agent without one pays nothing here.
  if (agent.policy !== null) {
    const decision = await decideSignIn(agent.policy, {
      request,
      client,
      now: ctx.clock(),
      signInsLastHour: () => ctx.store.countSignIns(agent.id, ctx.clock() - 3600),
    });
    if (decision.kind === 'refuse') return fail(new AccessDenied(decision.description), request.client_id);
    if (decision.kind === 'ask') {
      const approval = await askOwner(ctx, {
        agent,
        request,
        client,
        model: input.model,
        ip: caller.ip,
        userAgent: caller.userAgent,
      });
      if (approval) return { kind: 'approval_pending', agent, client, request, approval };
      return whyNotAuthenticated(ctx.clock());
    }
  }

  const now = ctx.clock();
  if (
    await ctx.store.markRequestAuthenticated(
      request.id,
      { agent_id: agent.id, model: input.model },
      now,
      auditEvent('authenticated', request.client_id),
      [signInSucceeded(request, agent, client, input.model)],
    )
  ) {
    return { kind: 'authenticated', agent, client };
  }
  return whyNotAuthenticated(now);
}
