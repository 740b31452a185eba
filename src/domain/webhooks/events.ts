/**
 * The data of each webhook event (docs/reference/webhooks.md): ids, names, hosts, scopes, the
 * model and the outcome, never a secret, code, token, digest or password. Each builder takes the
 * records as the rules have them and keeps only what may leave the server.
 */
import type { AccountRecord } from '../../store/accounts.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { AuthorizationRequestRecord } from '../../store/requests.ts';
import type { ApprovalRecord, ApprovalView } from '../../store/approvals.ts';
import { actionWords } from '../action-words.ts';
import type { WebhookEvent } from '../../store/outbox.ts';
import type { ExpiredRequest, WebhookRecord } from '../../store/webhooks.ts';
import { currentActor } from './actor.ts';
import type { EventType } from './event-types.ts';

const event = (type: EventType, data: Record<string, unknown>): WebhookEvent => ({ type, data });
/** A management event: its data, and who acted (the entry point's actor) unless the data says. */
const change = (type: EventType, data: Record<string, unknown>): WebhookEvent =>
  event(type, { actor: currentActor(), ...data });

/** An agent as events show it. */
export const agentData = (agent: Pick<AgentRecord, 'id' | 'name' | 'status' | 'account_id' | 'created_at'>) => ({
  id: agent.id,
  name: agent.name,
  status: agent.status,
  account_id: agent.account_id,
  created_at: agent.created_at,
});

const hostOf = (uri: string): string | null => {
  try {
    return new URL(uri).host;
  } catch {
    return null;
  }
};

/** A client (website) as events show it: its redirect URIs' hosts, not their paths. */
export const clientData = (client: ClientRecord) => ({
  id: client.id,
  name: client.name,
  status: client.status,
  type: client.token_endpoint_auth_method === 'none' ? 'public' : 'confidential',
  confirmation: client.approval,
  redirect_hosts: [...new Set(client.redirect_uris.map(hostOf).filter((host): host is string => host !== null))],
  resources: client.resources,
  source: client.source,
  account_id: client.account_id,
  created_at: client.created_at,
});

/** An account as events show it (never its password hash). */
export const accountData = (account: AccountRecord) => ({
  id: account.id,
  email: account.email,
  name: account.name,
  role: account.role,
  status: account.status,
  email_verified: account.email_verified,
  created_at: account.created_at,
});

/**
 * An agent's event.
 *
 * @example
 * agentEvent('agent.disabled', agent); // { type: 'agent.disabled', data: { agent: { id, name, status, … } } }
 */
export const agentEvent = (type: EventType, agent: AgentRecord, extra: Record<string, unknown> = {}) =>
  change(type, { agent: agentData(agent), ...extra });

/**
 * A client's event.
 *
 * @example
 * clientEvent('client.created', client);
 */
export const clientEvent = (type: EventType, client: ClientRecord, extra: Record<string, unknown> = {}) =>
  change(type, { client: clientData(client), ...extra });

/**
 * An account's event.
 *
 * @example
 * accountEvent('account.sign_in_method_changed', account, { change: 'passkey_added' });
 */
export const accountEvent = (type: EventType, account: AccountRecord, extra: Record<string, unknown> = {}) =>
  change(type, { account: accountData(account), ...extra });

/** What a request says in events: its id, scope, resource and where it sends the browser (host only). */
const requestData = (request: Pick<AuthorizationRequestRecord, 'id' | 'scope' | 'resource' | 'redirect_uri'>) => ({
  id: request.id,
  scope: request.scope,
  resource: request.resource,
  redirect_host: hostOf(request.redirect_uri),
});

/**
 * An agent signed in: the request, the agent, the website and the model.
 *
 * @example
 * signInSucceeded(request, agent, client, 'claude-opus-4');
 */
export const signInSucceeded = (
  request: AuthorizationRequestRecord,
  agent: AgentRecord,
  client: ClientRecord,
  model: string,
) =>
  event('agent.sign_in.succeeded', {
    request: requestData(request),
    agent: { id: agent.id, name: agent.name },
    client: { id: client.id, name: client.name },
    model,
    outcome: 'authenticated',
  });

/**
 * An agent's sign-in failed: the outcome is the error code the agent was answered with. The agent
 * id is the one presented, which may name no agent.
 *
 * @example
 * signInFailed({ agent_id: 'agt_x', request_id: 'req_y', model: 'm' }, null, 'invalid_credentials');
 */
export const signInFailed = (
  attempt: { agent_id: string; request_id: string; model: string },
  clientId: string | null,
  outcome: string,
) =>
  event('agent.sign_in.failed', {
    request: { id: attempt.request_id },
    agent: { id: attempt.agent_id },
    client: clientId === null ? null : { id: clientId },
    model: attempt.model,
    outcome,
  });

/** An approval as events show it: never the agent's address or User-Agent. */
const approvalData = (approval: ApprovalRecord) => ({
  id: approval.id,
  kind: approval.kind,
  status: approval.status,
  decision: approval.decision,
  created_at: approval.created_at,
  expires_at: approval.expires_at,
});

/**
 * An agent's policy asked its owner about a sign-in.
 *
 * @example
 * approvalRequested(view);
 */
export const approvalRequested = (approval: ApprovalView) =>
  event('agent.approval.requested', {
    approval: approvalData(approval),
    request: {
      id: approval.request_id,
      scope: approval.scope,
      resource: approval.resource,
      redirect_host: hostOf(approval.redirect_uri),
    },
    agent: { id: approval.agent_id, name: approval.agent_name },
    client: { id: approval.client_id, name: approval.client_name },
    model: approval.model,
    ...actionData(approval),
  });

/**
 * What an action's approval asks (docs/design.md §21): the details in words, the binding message
 * as the website sent it, and the details themselves; nothing for a sign-in's.
 */
const actionData = (approval: ApprovalView) =>
  approval.kind === 'action'
    ? {
        action: {
          words: actionWords(approval.authorization_details, approval.client_action_types),
          binding_message: approval.binding_message,
          authorization_details: approval.authorization_details,
        },
      }
    : {};

/**
 * The owner decided (the approval as decided, and who decided).
 *
 * @example
 * approvalDecided({ ...approval, status: 'approved', decision: 'once' });
 */
export const approvalDecided = (approval: ApprovalView) =>
  change('agent.approval.decided', {
    approval: approvalData(approval),
    request: { id: approval.request_id },
    agent: { id: approval.agent_id, name: approval.agent_name },
    client: { id: approval.client_id, name: approval.client_name },
    model: approval.model,
    ...actionData(approval),
  });

/**
 * The person at the page cancelled a request.
 *
 * @example
 * requestCancelled(request, client);
 */
export const requestCancelled = (request: AuthorizationRequestRecord, client: ClientRecord) =>
  event('authorization_request.cancelled', {
    request: { ...requestData(request), status_before: request.status },
    client: { id: client.id, name: client.name },
    agent: request.agent_id === null ? null : { id: request.agent_id },
    outcome: 'access_denied',
  });

/**
 * A request expired while waiting (for an agent: pending; for the browser: authenticated).
 *
 * @example
 * requestExpired(expired);
 */
export const requestExpired = (request: ExpiredRequest): WebhookEvent => ({
  // Announced by a sweep, seconds (or, after an outage, up to an hour) after the fact.
  occurredAt: request.expires_at,
  // No agent authenticated it (anyone may have opened it): purged with the request, whatever
  // its state, rather than kept WEBHOOK_RETENTION; SECURITY.md's disk bound depends on it.
  ...(request.status === 'pending' ? { requestExpiresAt: request.expires_at } : {}),
  ...event('authorization_request.expired', {
    request: {
      id: request.id,
      scope: request.scope,
      resource: request.resource,
      status_before: request.status,
      created_at: request.created_at,
      expires_at: request.expires_at,
    },
    client: { id: request.client_id, name: request.client_name },
    agent: request.agent_id === null ? null : { id: request.agent_id },
    outcome: 'request_expired',
  }),
});

/**
 * An endpoint as it is named outside its own page (other endpoints, mail, the activity): its
 * URL's host, never the URL, whose path often carries a token (a capability URL).
 *
 * @example
 * webhookHost('https://hooks.example.com/t/s3cr3t'); // 'hooks.example.com'
 */
export const webhookHost = (url: string): string => hostOf(url) ?? 'an invalid URL';

/**
 * An endpoint was disabled for failing: its id and host, never its URL.
 *
 * @example
 * webhookDisabled(webhook, 'every delivery failed for 24 hours');
 * // { type: 'webhook.disabled', data: { webhook: { id, host: 'hooks.example.com', description }, reason } }
 */
export const webhookDisabled = (webhook: WebhookRecord, reason: string) =>
  event('webhook.disabled', {
    webhook: { id: webhook.id, host: webhookHost(webhook.url), description: webhook.description },
    reason,
  });

/**
 * A test event, sent to one endpoint when an admin asks (Send test event): the endpoint as
 * webhook.disabled names it, and who asked.
 *
 * @example
 * webhookTest(webhook); // { type: 'webhook.test', data: { actor, webhook: { id, host: 'hooks.example.com', description } } }
 */
export const webhookTest = (webhook: WebhookRecord) =>
  change('webhook.test', {
    webhook: { id: webhook.id, host: webhookHost(webhook.url), description: webhook.description },
  });
