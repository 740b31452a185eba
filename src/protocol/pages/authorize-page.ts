/**
 * The authorization page (docs/contract.md GET /authorize, docs/design.md §4). Agents read the request id from
 * <meta name="request-id"> (those written for the original service, from a data block); the page's
 * script copies the handover sentence, counts down, follows the status and submits the continue
 * form once the agent has authenticated; without JavaScript, "Continue" does the same. Also the
 * confirmation page (approval=manual) and the error pages of the flow.
 */
import { DENIED_DESCRIPTION } from '../../domain/approvals.ts';
import type { ReturnTarget } from '../../domain/authorization-request/return-tickets.ts';
import { redirectHost } from '../../domain/authorization-request/status.ts';
import { isLoopbackRedirect } from '../../domain/clients.ts';
import { scopeValues } from '../../domain/scopes.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { AuthorizationRequestRecord } from '../../store/requests.ts';
import { type Html, html } from '../../web/html.ts';
import { layout } from '../../web/layout.ts';

const SCOPE_TEXT: Record<string, string> = {
  openid: 'Sign in with the identity of your AI agent',
  email: "Your agent owner's email address",
  profile: "Your agent owner's name",
  offline_access: 'Access that lasts after you leave, renewed without asking you again',
};

/**
 * One requested scope in words: the contract's wording, or what the resource server registered
 * for it (plain text, escaped like every value here), with the scope and the service named.
 */
function scopeItem(scope: string, descriptions: ReadonlyMap<string, string>, resource: string | null): Html {
  const described = descriptions.get(scope);
  if (described === undefined || resource === null) return html`<li>${SCOPE_TEXT[scope] ?? scope}</li>`;
  const host = URL.parse(resource)?.host || resource;
  return html`<li class="resource-scope" data-scope="${scope}">${described} <span class="muted">at ${host} (<code>${scope}</code>)</span></li>`;
}

export interface AuthorizePageView {
  baseUrl: string;
  request: AuthorizationRequestRecord;
  client: ClientRecord;
  /** Seconds until the request expires. */
  expiresIn: number;
  notice?: string;
  /** Set while the agent's owner is asked to approve: the progress shows it (data-state="approval"). */
  awaitingOwner?: boolean;
  /** What each of the request's resource scopes allows, as its resource server registered it. */
  scopeDescriptions?: ReadonlyMap<string, string>;
}

/** The mark of agentauth, drawn inline (markup, not script or style: the CSP allows it). */
const MARK = html`<svg class="mark" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false"><rect x="1" y="1" width="22" height="22" rx="6" fill="currentColor"/><path d="M7 16.5 12 6l5 10.5M9 13h6" fill="none" stroke="#fff" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

/** Whose page this is: agentauth, at this server's address. */
function brandHeader(baseUrl: string): Html {
  return html`<header class="auth-header">
<a class="brand" href="/" target="_blank" rel="noopener">${MARK}<span>agentauth</span></a>
<span class="auth-host">Sign-in service at <span id="issuer-host">${new URL(baseUrl).host}</span></span>
</header>`;
}

/** For a person who has never met such a page, or has no agent yet. Works without script. */
function aboutThisPage(siteName: string | undefined, baseUrl: string): Html {
  const host = new URL(baseUrl).host;
  return html`<details class="about" id="about">
<summary>What is this? How do I set up an agent?</summary>
<p>This is agentauth at ${host}, a sign-in service for AI agents${siteName ? html`, used by ${siteName}` : ''}. Instead of typing a password, you ask your AI agent to sign you in: it proves who you are over its own connection, and this page then takes you back to the website.</p>
<p>No agent yet? An agent signs in with an agent ID and secret that its owner creates in this service's <a href="/console" target="_blank" rel="noopener">console (opens in a new tab)</a>; the <a href="/" target="_blank" rel="noopener">start page</a> says more. Until then, go back to the website and choose another way to sign in.</p>
<p>Only give a request to your own agent, and only for a sign-in you started yourself.</p>
</details>`;
}

/** The site's initial in a coloured square: a face for the name, as no logo is registered. */
function monogram(name: string): Html {
  const initial = [...name.trim()][0]?.toUpperCase() ?? '?';
  return html`<span class="monogram" aria-hidden="true">${initial}</span>`;
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

function continueForm(
  request: AuthorizationRequestRecord,
  approveLabel: string,
  confirmed: boolean,
  siteName: string,
): Html {
  // data-back-label: what the script names Cancel once the request has ended (it then only goes back).
  return html`<form method="post" action="/authorize/continue" id="continue-form" class="auth-actions">
<input type="hidden" name="request_id" value="${request.id}">
${confirmed ? html`<input type="hidden" name="confirmed" value="1">` : ''}
<button type="submit" name="action" value="approve" id="approve">${approveLabel}</button>
<button type="submit" name="action" value="cancel" id="cancel" class="secondary" data-back-label="Back to ${siteName}">Cancel</button>
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

/** What the person hands to the agent in one action: a sentence that says what to do with the id. */
export function handoverSentence(siteName: string, requestId: string): string {
  return `Sign me in to ${siteName} with agentauth request ${requestId}`;
}

/**
 * What the page says while the agent's owner is asked to approve (docs/design.md §16): their
 * name, or the agent's when the owner gave none (never an email). authorize.js says the same.
 *
 * @example
 * waitingForOwnerText({ agent_name: 'Research assistant', owner_name: 'Ada' }, 'Acme Notes');
 * // "Waiting for approval from Ada. Your agent asked its owner to allow signing in to Acme Notes; this page continues as soon as they approve."
 */
export function waitingForOwnerText(
  approval: { agent_name: string; owner_name: string | null },
  siteName: string,
): string {
  // No possessive: a name such as "You" (the guides' example) or "Ms. X" reads wrongly with 's.
  const whom = approval.owner_name ?? `the owner of ${approval.agent_name}`;
  return `Waiting for approval from ${whom}. Your agent asked its owner to allow signing in to ${siteName}; this page continues as soon as they approve.`;
}

/** "10 minutes", "1 minute", "45 seconds": how long the request stays valid, without script. */
function duration(seconds: number): string {
  if (seconds >= 90) return `${Math.round(seconds / 60)} minutes`;
  if (seconds >= 60) return '1 minute';
  return `${Math.max(0, seconds)} seconds`;
}

export function authorizePage(view: AuthorizePageView): string {
  const { request, client, baseUrl } = view;
  const host = redirectHost(request);
  const sentence = handoverSentence(client.name, request.id);
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
    html`<div class="site-title">${monogram(client.name)}<h1><span id="client-name">${client.name}</span> asks your AI agent to sign you in</h1></div>
${clientOrigin(client)}
<p>After sign-in you will be sent to <strong id="redirect-host">${host}</strong>.</p>
${localhostWarning(client)}
${resourceNotice(client, request)}
<section class="handover" aria-labelledby="handover-title"${view.awaitingOwner ? html` hidden` : ''}>
<h2 id="handover-title">Give this to your AI agent</h2>
<p class="sentence" id="handover-sentence" data-sentence="${sentence}">Sign me in to ${client.name} with agentauth request <code id="request-id">${request.id}</code></p>
<div class="copy-actions" id="copy-actions" hidden>
<button type="button" id="copy-sentence">Copy</button>
<button type="button" id="copy-id" class="secondary">Copy request ID only</button>
<button type="button" id="share" class="secondary" hidden>Share…</button>
</div>
<p class="copy-feedback" id="copy-feedback" role="status" aria-live="polite"></p>
<p class="hint">Paste it into your agent's chat, or send it to yourself if your agent runs on another device. Your agent signs in on its own; this page follows by itself.</p>
${request.login_hint ? html`<p id="login-hint">Only the agent <code>${request.login_hint}</code> can sign in to this request.</p>` : ''}
</section>
<section class="progress" id="progress" data-state="${view.awaitingOwner ? 'approval' : 'waiting'}" aria-labelledby="progress-title">
<h2 id="progress-title" class="visually-hidden">Progress</h2>
<p id="status" role="status" aria-live="polite">${view.notice ?? 'Waiting for your agent to authenticate…'}</p>
<p id="signed-in-agent" hidden></p>
<p id="time-left" data-expires-in="${String(view.expiresIn)}">This request stays valid for ${duration(view.expiresIn)}.</p>
</section>
${continueForm(request, 'Continue', false, client.name)}
<section id="what-is-shared" aria-labelledby="what-is-shared-title">
<h2 id="what-is-shared-title">What ${client.name} will receive</h2>
<ul id="scopes">${scopeValues(request.scope).map((s) => scopeItem(s, view.scopeDescriptions ?? new Map(), request.resource))}</ul>
</section>
${aboutThisPage(client.name, baseUrl)}`,
    { bodyClass: 'authorize', header: brandHeader(baseUrl) },
  );
}

export interface ConfirmPageView {
  baseUrl: string;
  request: AuthorizationRequestRecord;
  client: ClientRecord;
  agent: AgentRecord | undefined;
}

/** approval=manual: who authenticated, and the person's explicit confirmation. */
export function confirmPage(view: ConfirmPageView): string {
  const { request, client, agent, baseUrl } = view;
  return layout(
    `Confirm sign-in to ${client.name} — agentauth`,
    html`<meta name="request-id" content="${request.id}">`,
    html`<div class="site-title">${monogram(client.name)}<h1>Confirm sign-in to <span id="client-name">${client.name}</span></h1></div>
<p class="progress" data-state="signed-in" id="confirm-note">An agent has signed in for this request. Approve only if it is yours and you expected it.</p>
<dl id="agent-details" class="details-list">
<dt>Agent</dt><dd id="agent-name">${agent?.name ?? request.agent_id} <code>${request.agent_id}</code></dd>
<dt>Owner</dt><dd id="agent-owner">${agent?.owner_name ? `${agent.owner_name} <${agent.owner_email}>` : (agent?.owner_email ?? '')}</dd>
<dt>Model</dt><dd id="agent-model">${request.model}</dd>
<dt>Destination</dt><dd>${redirectHost(request)}</dd>
${request.resource ? html`<dt>Access to</dt><dd id="resource">${request.resource}</dd>` : ''}
</dl>
${continueForm(request, 'Approve', true, client.name)}
${aboutThisPage(client.name, baseUrl)}`,
    { bodyClass: 'authorize', header: brandHeader(baseUrl) },
  );
}

/** The person's words for an error of the flow; the code and developer text stay below them. */
function errorWords(
  error: string,
  description: string,
  back: ReturnTarget | undefined,
): { heading: string; text: string } {
  const site = back?.siteName ?? 'the website';
  // The owner's denial is an access_denied of its own: the person is told who ended it.
  if (error === 'access_denied' && description === DENIED_DESCRIPTION)
    return {
      heading: "The agent's owner denied this sign-in",
      text: `Nothing was shared with ${site}. Go back to it to sign in another way, or ask the agent's owner.`,
    };
  switch (error) {
    case 'invalid_client':
      return {
        heading: 'This sign-in link does not work',
        text: 'The website that sent you here is not registered with this sign-in service, or has been switched off. Nothing was shared with it.',
      };
    case 'request_expired':
      return {
        heading: 'This sign-in request expired',
        text: `A sign-in request lasts 10 minutes. Nothing was shared. Start again from ${site} to get a new one.`,
      };
    case 'request_already_used':
      return {
        heading: 'This sign-in is already finished',
        text: 'This request was completed earlier, so it cannot be used again. If you are not signed in, start again from the website.',
      };
    case 'request_contested':
      return {
        heading: 'This sign-in was stopped to protect you',
        text: `Two different agents tried to sign in with this request, so nobody was signed in. Start again from ${site}, and give the new request only to your own agent.`,
      };
    case 'access_denied':
      return {
        heading: 'This sign-in cannot continue here',
        text: 'Nothing was shared. The reason is below; start again from the website, in this browser.',
      };
    case 'too_many_requests':
    case 'temporarily_unavailable':
      return { heading: 'Please wait a moment', text: 'The sign-in service is busy. Try again in a minute.' };
    default:
      return back
        ? {
            heading: `${back.siteName} sent a sign-in request that cannot be used`,
            text: `Nothing was shared. Go back to ${back.siteName} and try again; if it happens again, tell the website's support (the details below are for them).`,
          }
        : {
            heading: 'This sign-in link does not work',
            text: 'Something in the link that brought you here is wrong, so nothing was shared. Go back to the website and try again.',
          };
  }
}

export interface FlowErrorView {
  baseUrl: string;
  error: string;
  description: string;
  /** Set only where the redirect URI is known good (docs/design.md §4). */
  back?: ReturnTarget;
}

/**
 * The 400 HTML error page of GET /authorize (docs/contract.md) and of the continue step: the
 * person's words and, where the website is known, the way back to it; `error` and
 * `error_description` stay visible and in meta elements for programs.
 */
export function flowErrorPage(view: FlowErrorView): string {
  const { error, description, back, baseUrl } = view;
  const words = errorWords(error, description, back);
  return layout(
    `${words.heading} — agentauth`,
    html`<meta name="error" content="${error}">
<meta name="error-description" content="${description}">`,
    html`<h1>${words.heading}</h1>
<p class="lead" id="error-words">${words.text}</p>
${
  back
    ? html`<p class="auth-actions"><a class="button" id="back-to-site" href="${back.href}">Back to ${back.siteName}</a></p>`
    : html`<p id="no-way-back">Close this page, or use your browser's Back button to return to the website.</p>`
}
<section class="developer-details" aria-labelledby="details-title">
<h2 id="details-title">Details for the website's developers</h2>
<p class="error-description" id="error-description">${description}</p>
<p class="error-code">Error code: <code id="error">${error}</code></p>
</section>
${aboutThisPage(back?.siteName, baseUrl)}`,
    { bodyClass: 'authorize', header: brandHeader(baseUrl) },
  );
}
