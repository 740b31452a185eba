/**
 * The authorization page (docs/contract.md GET /authorize, docs/design.md §4). Agents read the request id from
 * <meta name="request-id"> (those written for the original service, from a data block); the page's
 * script polls the status and submits the continue form once the agent has authenticated; without
 * JavaScript, "Continue" does the same.
 */
import { redirectHost } from '../../domain/authorization-request.ts';
import { isLoopbackRedirect } from '../../domain/clients.ts';
import { scopeValues } from '../../domain/scopes.ts';
import type { AgentRecord, AuthorizationRequestRecord, ClientRecord } from '../../store/types.ts';
import { type Html, html } from '../../web/html.ts';
import { layout } from '../../web/layout.ts';

const SCOPE_TEXT: Record<string, string> = {
  openid: 'Sign in with the identity of your AI agent',
  email: "Your agent owner's email address",
  profile: "Your agent owner's name",
};

export interface AuthorizePageView {
  baseUrl: string;
  request: AuthorizationRequestRecord;
  client: ClientRecord;
  notice?: string;
}

/**
 * Who vouches for the client's name. A metadata document's client named itself and is known by
 * the host serving the document; a dynamically registered one named itself (docs/design.md §13).
 */
function clientOrigin(client: ClientRecord): Html | '' {
  if (client.source === 'metadata_document') {
    return html`<p id="client-origin">This application is identified by <strong>${new URL(client.id).host}</strong>, which also chose its name.</p>`;
  }
  if (client.source === 'dynamic')
    return html`<p id="client-origin">This application registered itself; its name has not been checked.</p>`;
  return '';
}

/**
 * A self-described application that only ever receives the sign-in on the device it runs on:
 * anyone can publish such a document, so the person should have started it themselves.
 */
function localhostWarning(client: ClientRecord): Html | '' {
  if (client.source === 'manual' || !client.redirect_uris.every(isLoopbackRedirect)) return '';
  return html`<p id="localhost-warning" class="warning" role="note">This application receives the sign-in on the computer it runs on (localhost). Continue only if you started it yourself, on this device.</p>`;
}

/**
 * A resource (RFC 8707) makes the tokens good at another service than the website: say so in
 * words, with that service's host first and its full address for whoever wants to check it.
 */
function resourceNotice(client: ClientRecord, request: AuthorizationRequestRecord): Html | '' {
  if (!request.resource) return '';
  const host = URL.parse(request.resource)?.host || request.resource;
  return html`<p id="resource-notice" class="warning" role="note">${client.name} also asks for access to another service: <strong id="resource-host">${host}</strong>. That service will accept this sign-in as you. Its address is <code id="resource">${request.resource}</code>.</p>`;
}

function continueForm(request: AuthorizationRequestRecord, approveLabel: string, confirmed: boolean): Html {
  return html`<form method="post" action="/authorize/continue" id="continue-form">
<input type="hidden" name="request_id" value="${request.id}">
${confirmed ? html`<input type="hidden" name="confirmed" value="1">` : ''}
<button type="submit" name="action" value="approve" id="approve">${approveLabel}</button>
<button type="submit" name="action" value="cancel" id="cancel" class="secondary">Cancel</button>
</form>`;
}

/**
 * The request id as the original auth-agent service's SDKs find it: their extractRequestId scans
 * the HTML as fetched for `window.authRequest = { request_id: '…' }` (docs/design.md §4). A data
 * block (type text/plain) is never executed, so the CSP still allows no inline script; our own
 * script sets the live `window.authRequest` from the meta tag. The id is `req_` and base64url, so
 * escaping changes nothing; it is there so that no value could ever end the block.
 */
function originalSdkBlock(request: AuthorizationRequestRecord): Html {
  return html`<script type="text/plain" id="auth-request">window.authRequest = { request_id: '${request.id}' };</script>`;
}

export function authorizePage(view: AuthorizePageView): string {
  const { request, client, baseUrl } = view;
  const host = redirectHost(request);
  return layout(
    `Authorize ${client.name} — agentauth`,
    html`<meta name="request-id" content="${request.id}">
<meta name="agent-authenticate-endpoint" content="${baseUrl}/api/agent/authenticate">
<meta name="agent-status-endpoint" content="${baseUrl}/api/check-status">
<meta name="client-name" content="${client.name}">
<meta name="redirect-host" content="${host}">
<meta name="scope" content="${request.scope}">
${request.resource ? html`<meta name="resource" content="${request.resource}">` : ''}
${originalSdkBlock(request)}
<script src="/assets/authorize.js" defer></script>`,
    html`<h1><span id="client-name">${client.name}</span> asks your AI agent to sign in</h1>
${clientOrigin(client)}
<p>After sign-in you will be sent to <strong id="redirect-host">${host}</strong>.</p>
${localhostWarning(client)}
${resourceNotice(client, request)}
<h2>Requested access</h2>
<ul id="scopes">${scopeValues(request.scope).map((s) => html`<li>${SCOPE_TEXT[s] ?? s} <code>${s}</code></li>`)}</ul>
<h2>Request ID for your agent</h2>
<p class="request-id"><code id="request-id">${request.id}</code></p>
<p>Give this request ID to your AI agent. It authenticates on its own; this page continues when it has.</p>
${request.login_hint ? html`<p id="login-hint">Only the agent <code>${request.login_hint}</code> can sign in to this request.</p>` : ''}
<p id="status" role="status" aria-live="polite">${view.notice ?? 'Waiting for your agent to authenticate…'}</p>
<p id="signed-in-agent" hidden></p>
${continueForm(request, 'Continue', false)}`,
  );
}

export interface ConfirmPageView {
  request: AuthorizationRequestRecord;
  client: ClientRecord;
  agent: AgentRecord | undefined;
}

/** approval=manual: who authenticated, and the person's explicit confirmation. */
export function confirmPage(view: ConfirmPageView): string {
  const { request, client, agent } = view;
  return layout(
    `Confirm sign-in to ${client.name} — agentauth`,
    html`<meta name="request-id" content="${request.id}">`,
    html`<h1>Confirm sign-in to <span id="client-name">${client.name}</span></h1>
<p>An agent has authenticated for this request. Approve only if you expected it.</p>
<dl id="agent-details">
<dt>Agent</dt><dd id="agent-name">${agent?.name ?? request.agent_id} <code>${request.agent_id}</code></dd>
<dt>Owner</dt><dd id="agent-owner">${agent?.owner_name ? `${agent.owner_name} <${agent.owner_email}>` : (agent?.owner_email ?? '')}</dd>
<dt>Model</dt><dd id="agent-model">${request.model}</dd>
<dt>Destination</dt><dd>${redirectHost(request)}</dd>
${request.resource ? html`<dt>Access to</dt><dd id="resource">${request.resource}</dd>` : ''}
</dl>
${continueForm(request, 'Approve', true)}`,
  );
}
