/**
 * POST /api/agent/authenticate: the agent's authentication, pending → authenticated
 * (docs/design.md §5), or held for its owner when its policy asks (§16). authenticateAgent runs
 * the checks in order; each is a function of its own, and every failure goes through `fail`
 * (the client address's failure count, then the audit event with its webhook) before it is thrown.
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
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { AuditEvent } from '../../store/history.ts';
import type { AgentAndRequest, AuthorizationRequestRecord } from '../../store/requests.ts';
import type { ApprovalRecord } from '../../store/approvals.ts';
import { Throttled } from '../../throttle/agent-authentication.ts';
import { decideSignIn, tooManySignIns } from '../agent-policy.ts';
import { verifyAgentCredentials } from '../agents.ts';
import { type ApprovalAsk, askOwner, type WarningLog } from '../approvals.ts';
import { redirectUriMatches } from '../clients.ts';
import { signInFailed, signInSucceeded } from '../webhooks/events.ts';
import { CONTESTED_DESCRIPTION, EXPIRED_DESCRIPTION, isExpired, NO_LONGER_REGISTERED } from './state.ts';
import { redirectHost } from './status.ts';

const HELD_FOR_ANOTHER = 'The authorization request is waiting for an owner to approve another sign-in.';
const ALREADY_USED =
  'The authorization request has already been used; an authorization request can be authenticated only once.';

/** What the agent sends (the body of POST /api/agent/authenticate). */
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

/** Where the agent's call came from: its address (the throttles') and User-Agent (the audit's). */
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
 * attempt is an audit event, except that a throttled key writes one per window. An owner asked
 * is mailed from here; a mail that fails is told to `log`, never to the agent.
 */
export async function authenticateAgent(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  log: WarningLog,
): Promise<AuthenticationOutcome> {
  // The agent and the request (with its client) in one read, with the client address's failures
  // where the store keeps them (PostgreSQL); the rules below still run in order, the throttle first.
  const read = await ctx.store.requests.findWithAgent(
    input.agent_id,
    input.request_id,
    ctx.throttle.storedKeyOf(caller.ip),
  );
  await checkClientThrottle(ctx, input, caller, read.failures);
  const agent = await verifiedAgent(ctx, input, caller, read.agent);

  const { found } = read;
  if (!found) return fail(ctx, input, caller, new InvalidRequest('The authorization request does not exist.', 404));
  const { request, client } = found;
  if (client?.status !== 'active') {
    const inactive = new InvalidClient('The client of this authorization request is no longer active.', 400);
    return fail(ctx, input, caller, inactive, request.client_id);
  }
  const refusal = refusalOf(input, agent, request, client);
  if (refusal) return fail(ctx, input, caller, refusal, request.client_id);

  // The owner's policy, before any state change; an agent without one pays nothing here.
  if (agent.policy !== null) {
    const decision = await decideSignIn(agent.policy, {
      request,
      client,
      now: ctx.clock(),
      signInsLastHour: () => ctx.store.signIns.count(agent.id, ctx.clock() - 3600),
    });
    if (decision.kind === 'refuse')
      return fail(ctx, input, caller, new AccessDenied(decision.description), request.client_id);
    if (decision.kind === 'ask') {
      const ask = { agent, request, client, model: input.model, ip: caller.ip, userAgent: caller.userAgent };
      return holdForOwner(ctx, input, caller, ask, log);
    }
  }
  return markAuthenticated(ctx, input, caller, agent, request, client);
}

/** The sign-in history's row of this attempt, stamped now. */
function auditEvent(
  ctx: Pick<Context, 'clock'>,
  input: AgentAuthentication,
  caller: CallerInfo,
  outcome: string,
  clientId: string | null = null,
): AuditEvent {
  return {
    at: ctx.clock(),
    agent_id: input.agent_id,
    request_id: input.request_id,
    client_id: clientId,
    model: input.model,
    ip: caller.ip,
    user_agent: caller.userAgent?.slice(0, 512) ?? null,
    outcome,
  };
}

/** Each failure's audit event and its webhook (agent.sign_in.failed) commit together. */
function recordFailedAttempt(
  ctx: Pick<Context, 'clock' | 'store'>,
  input: AgentAuthentication,
  caller: CallerInfo,
  outcome: string,
  clientId: string | null = null,
): Promise<void> {
  const event = auditEvent(ctx, input, caller, outcome, clientId);
  return ctx.store.signIns.record(event, [signInFailed(input, event.client_id, outcome)]);
}

/** A failure: counted against the client address, recorded, then thrown. */
async function fail(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  error: OAuthError,
  clientId: string | null = null,
): Promise<never> {
  await ctx.throttle.recordFailure(caller.ip);
  await recordFailedAttempt(ctx, input, caller, error.error, clientId);
  throw error;
}

/** A throttled attempt: recorded once per window, so a flood writes one row, then thrown. */
async function refuseThrottled(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  error: Throttled,
): Promise<never> {
  if (error.firstInWindow) await recordFailedAttempt(ctx, input, caller, 'throttled');
  throw error;
}

/** The client address's throttle, from the failures read with the agent where the store keeps them. */
async function checkClientThrottle(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  failures: AgentAndRequest['failures'],
): Promise<void> {
  try {
    await ctx.throttle.checkClient(caller.ip, failures);
  } catch (error) {
    if (error instanceof Throttled) return refuseThrottled(ctx, input, caller, error);
    throw error;
  }
}

/** The agent, if its credentials hold; a wrong one counts against the agent_id and the address. */
async function verifiedAgent(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  stored: AgentRecord | undefined,
): Promise<AgentRecord> {
  const agent = await verifyAgentCredentials(ctx, stored, input);
  if (agent) return agent;
  const throttled = await ctx.throttle.recordWrongCredentials(input.agent_id, caller.ip);
  if (throttled) return refuseThrottled(ctx, input, caller, throttled);
  await recordFailedAttempt(ctx, input, caller, 'invalid_credentials');
  throw new InvalidCredentials('The agent credentials are invalid.');
}

/**
 * Why this agent may not authenticate this request, checked before any state change: the
 * redirect URI taken away since, a request for a site the agent did not expect (412), or one
 * started for another agent (login_hint, 403). Undefined when none applies.
 */
function refusalOf(
  input: AgentAuthentication,
  agent: AgentRecord,
  request: AuthorizationRequestRecord,
  client: ClientRecord,
): OAuthError | undefined {
  if (!redirectUriMatches(client, request.redirect_uri)) return new InvalidRequest(NO_LONGER_REGISTERED);
  if (input.expected_client_id !== undefined && input.expected_client_id !== request.client_id)
    return new RequestMismatch(
      `This authorization request is for client ${request.client_id}, not ${input.expected_client_id}.`,
    );
  const host = redirectHost(request);
  if (input.expected_redirect_host !== undefined && input.expected_redirect_host.toLowerCase() !== host.toLowerCase())
    return new RequestMismatch(
      `This authorization request sends the browser to ${host}, not ${input.expected_redirect_host}.`,
    );
  if (input.expected_resource !== undefined && input.expected_resource !== request.resource) {
    const named = request.resource === null ? 'names no resource' : `is for the resource ${request.resource}`;
    return new RequestMismatch(`This authorization request ${named}, not ${input.expected_resource}.`);
  }
  if (request.login_hint !== null && request.login_hint !== agent.id)
    return new AgentMismatch('This authorization request was started for another agent (login_hint).');
  return undefined;
}

/** The owner's policy asks: the request is held for them (and they are mailed), or why it cannot be. */
async function holdForOwner(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  ask: ApprovalAsk,
  log: WarningLog,
): Promise<AuthenticationOutcome> {
  const approval = await askOwner(ctx, ask, log);
  if (approval)
    return { kind: 'approval_pending', agent: ask.agent, client: ask.client, request: ask.request, approval };
  return whyNotAuthenticated(ctx, input, caller, ask.agent, ask.request, ctx.clock());
}

/**
 * pending → authenticated, if the request is still free for it (a conditional update) and, for
 * an agent with a sign-ins-per-hour limit, the limit still allows it (counted in the same write:
 * sign-ins at once cannot all pass one check made before).
 */
async function markAuthenticated(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  agent: AgentRecord,
  request: AuthorizationRequestRecord,
  client: ClientRecord,
): Promise<AuthenticationOutcome> {
  const now = ctx.clock();
  const perHour = agent.policy?.max_sign_ins_per_hour ?? undefined;
  if (
    await ctx.store.requests.authenticate(
      request.id,
      { agent_id: agent.id, model: input.model },
      now,
      auditEvent(ctx, input, caller, 'authenticated', request.client_id),
      [signInSucceeded(request, agent, client, input.model)],
      perHour,
    )
  ) {
    return { kind: 'authenticated', agent, client };
  }
  return whyNotAuthenticated(ctx, input, caller, agent, request, now, perHour);
}

/** Lost the conditional update (or the hold): tell the caller why from the row as it is now. */
async function whyNotAuthenticated(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
  agent: AgentRecord,
  request: AuthorizationRequestRecord,
  now: number,
  perHour?: number,
): Promise<never> {
  const current = (await ctx.store.requests.find(request.id)) ?? request;
  if (isExpired(current, ctx.clock()))
    return fail(ctx, input, caller, new RequestExpired(EXPIRED_DESCRIPTION), request.client_id);
  // Still free for it: what refused the write was the limit, used up by sign-ins made at once.
  if (perHour !== undefined && current.status === 'pending' && current.approval_id === null)
    return fail(ctx, input, caller, new AccessDenied(tooManySignIns(perHour)), request.client_id);
  // Someone else's agent got there first (a leaked request_id) or this one did: either way the
  // browser must not be signed in as whichever came first. No code is released.
  if (
    current.status === 'authenticated' &&
    current.agent_id !== agent.id &&
    (await ctx.store.requests.contest(
      request.id,
      agent.id,
      now,
      CONTESTED_DESCRIPTION,
      auditEvent(ctx, input, caller, 'request_contested', request.client_id),
    ))
  ) {
    await ctx.throttle.recordFailure(caller.ip);
    throw new RequestContested(CONTESTED_DESCRIPTION);
  }
  const held = current.status === 'pending' && current.approval_id !== null;
  return fail(ctx, input, caller, new RequestAlreadyUsed(held ? HELD_FOR_ANOTHER : ALREADY_USED), request.client_id);
}
