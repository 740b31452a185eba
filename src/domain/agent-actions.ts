/**
 * The agent's side of action requests (docs/design.md §21): what websites asked its owner about
 * it, in words, and how each stands, so the agent can tell its user "waiting for your owner to
 * approve: Pay 20 EUR to Acme (Acme Notes)" and then the outcome. Read at GET /api/agent/actions
 * by the agent itself, authenticated as at /api/agent/authenticate.
 */
import type { Context } from '../context.ts';
import type { ActionRequestRecord } from '../store/action-requests.ts';
import type { ClientRecord } from '../store/clients.ts';
import { actionSummary, actionWords } from './action-words.ts';
import type { AuthorizationDetail } from './authorization-details.ts';

/** How long a decided (or expired) action stays in the agent's list: long enough for a wait to read it. */
export const RECENT_ACTIONS_SECONDS = 600;
/** The most actions the list holds (an agent has at most 20 waiting; the rest are recent). */
export const MAX_LISTED_ACTIONS = 50;
/** The assertion's request_id of a key-bound agent listing its actions: no sign-in's request id looks like it. */
export const ACTIONS_ASSERTION_REQUEST_ID = 'agent-actions';

/** Where an action stands, as the agent reads it: tokens issued is still 'approved'. */
export type AgentActionStatus = 'pending' | 'approved' | 'denied' | 'expired';

/** One action request as its agent is told of it. */
export interface AgentAction {
  id: string;
  client_id: string;
  client_name: string;
  /** Each detail in words. */
  words: string[];
  /** A sentence for the agent's user: waiting, approved, denied or expired, and what. */
  message: string;
  binding_message: string | null;
  authorization_details: AuthorizationDetail[];
  status: AgentActionStatus;
  /** Who answered: the owner, or their policy (null while waiting or when it expired). */
  answered_by: 'owner' | 'policy' | null;
  created_at: number;
  expires_at: number;
  /** Seconds left while waiting; 0 otherwise. */
  expires_in: number;
  decided_at: number | null;
}

/**
 * The status the agent reads: a pending request past its expiry is expired (before the sweep
 * marks it), and one whose tokens were issued is approved.
 */
function statusOf(request: Pick<ActionRequestRecord, 'status' | 'expires_at'>, now: number): AgentActionStatus {
  if (request.status === 'issued') return 'approved';
  if (request.status === 'pending' && request.expires_at <= now) return 'expired';
  return request.status === 'pending' ? 'pending' : request.status;
}

/**
 * The sentence an agent tells its user about an action.
 *
 * @example
 * actionMessage('pending', null, 'Pay 20 EUR to Acme', 'Acme Notes');
 * // 'Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)'
 */
export function actionMessage(
  status: AgentActionStatus,
  answeredBy: 'owner' | 'policy' | null,
  summary: string,
  website: string,
): string {
  const what = `${summary} (${website})`;
  switch (status) {
    case 'pending':
      return `Waiting for your owner to approve: ${what}`;
    case 'approved':
      return answeredBy === 'policy' ? `Your owner's policy approved: ${what}` : `Your owner approved: ${what}`;
    case 'denied':
      return answeredBy === 'policy' ? `Your owner's policy refused: ${what}` : `Your owner denied: ${what}`;
    case 'expired':
      return `Expired before your owner decided: ${what}`;
  }
}

/**
 * The agent's action requests waiting for its owner, or decided or expired in the last ten
 * minutes, newest first, each in the words of its website's action types.
 *
 * @example
 * const actions = await listAgentActions(ctx, agent.id);
 * actions[0]?.message; // 'Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)'
 */
export async function listAgentActions(
  deps: Pick<Context, 'store' | 'clock'>,
  agentId: string,
): Promise<AgentAction[]> {
  const now = deps.clock();
  // A request waits at most 600 s, so one created within twice that covers what waits and what
  // ended in the last ten minutes; the filter below keeps exactly those.
  const requests = await deps.store.actionRequests.listOfAgent(
    agentId,
    now - 2 * RECENT_ACTIONS_SECONDS,
    MAX_LISTED_ACTIONS,
  );
  const clients = new Map<string, ClientRecord | undefined>();
  for (const clientId of new Set(requests.map((request) => request.client_id)))
    clients.set(clientId, await deps.store.clients.find(clientId));
  const actions: AgentAction[] = [];
  for (const request of requests) {
    const status = statusOf(request, now);
    const endedAt = status === 'expired' ? request.expires_at : request.decided_at;
    if (status !== 'pending' && (endedAt ?? 0) < now - RECENT_ACTIONS_SECONDS) continue;
    const client = clients.get(request.client_id);
    const types = client?.action_types ?? [];
    const details = request.authorization_details as AuthorizationDetail[];
    const website = client?.name ?? request.client_id;
    const answeredBy = status === 'pending' || status === 'expired' ? null : request.answered_by;
    const words = actionWords(details, types);
    actions.push({
      id: request.id,
      client_id: request.client_id,
      client_name: website,
      words,
      message: actionMessage(status, answeredBy, actionSummary(words), website),
      binding_message: request.binding_message,
      authorization_details: details,
      status,
      answered_by: answeredBy,
      created_at: request.created_at,
      expires_at: request.expires_at,
      expires_in: status === 'pending' ? request.expires_at - now : 0,
      decided_at: request.decided_at,
    });
  }
  return actions;
}
