/**
 * What a person who opens the issuer's address sees (issue 10: `/` leads somewhere useful): what
 * this server is, and where each kind of visitor goes (owners of agents and websites: the console).
 */
import { html } from '../../web/html.ts';
import { layout } from '../../web/layout.ts';

export function landingPage(baseUrl: string): string {
  return layout(
    'agentauth',
    html``,
    html`<h1>agentauth</h1>
<p>This is an identity provider for AI agents at <code id="issuer">${baseUrl}</code>. Websites send you here to let your AI agent sign you in.</p>
<h2>Signing in with your agent</h2>
<p>Start from the website you want to use and choose to sign in with your AI agent. You will see a page with a request ID; give it to your agent, and the page continues by itself once your agent has signed in.</p>
<p>Only give a request ID to your own agent, and only for a sign-in you started yourself.</p>
<h2>Managing your agents and websites</h2>
<p>Create agents, read their sign-ins and register websites in the <a id="console-link" href="/console">console</a>.</p>
<h2>For developers</h2>
<ul>
<li><a href="${baseUrl}/.well-known/openid-configuration">OpenID Connect discovery</a> and <a href="${baseUrl}/.well-known/oauth-authorization-server">OAuth authorization server metadata</a></li>
<li>Agents look a request up at <code>GET /api/agent/request?request_id=…</code> and sign in at <code>POST /api/agent/authenticate</code>.</li>
</ul>`,
  );
}
