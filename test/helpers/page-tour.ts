/**
 * Every page a person can see, in every state worth looking at, on a console full of realistic
 * data: what the page audit suite (test/page-audit.test.ts) checks and what `npm run screenshots`
 * photographs, so the two never drift apart. `seedConsole` fills a server's database; `pageTour`
 * lists the states, each a name (the screenshot's file name) and how a browser gets there.
 *
 * Two data sets: 'docs' (short, friendly names for the documentation's pictures) and 'stress'
 * (names of 60+ characters with and without spaces, long emails and redirect URIs) — the same
 * rows and counts otherwise: many accounts, a history of more than one page, long user agents,
 * several sessions, invitations and admin events, a manual-approval website.
 */
import type { BrowserContext, Dialog, Page } from 'playwright-core';
import { createOwnedAgent, createOwnedClient, createOwnedKeyBoundAgent } from './owned.ts';
import { registerClient } from '../../src/domain/clients.ts';
import type { Context } from '../../src/context.ts';
import { createAccount, issueLink } from '../../src/domain/accounts.ts';
import { createApiKey, revokeApiKey } from '../../src/management/api-keys.ts';
import { createWebhook, updateWebhook } from '../../src/domain/webhooks/endpoints.ts';
import { consoleActor, operator } from '../../src/management/actor.ts';
import { createClient, updateClient } from '../../src/management/clients.ts';
import type { ActionType } from '../../src/store/clients.ts';
import { generateKeyPairSync } from 'node:crypto';

import { agentKeyOf } from '../../src/domain/agents.ts';

import { setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { decideApproval } from '../../src/domain/approvals.ts';
import { recordConsoleEvent } from '../../src/console/events.ts';
import { startSession } from '../../src/console/sessions.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { PAYMENT } from './action-requests.ts';
import { addVirtualAuthenticator } from './browser.ts';
import { authenticate, authorizeUrl, obtainTokens, type Party, pkcePair } from './flow.ts';
import type { TestServer } from './server.ts';

export type DataSet = 'docs' | 'stress';
export const PASSWORD = 'correct horse battery staple';
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export type Size = 'desktop' | 'phone';
export const VIEWPORTS: Record<Size, { width: number; height: number }> = { desktop: DESKTOP, phone: PHONE };

const LONG_UA =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 research-assistant/1.4.2 (+https://research-assistant.example/bot)';
const AGENT_UA =
  'research-assistant/1.4.2 python-httpx/0.27.0 CPython/3.12.4 Linux/6.8.0-1012-aws-x86_64-with-glibc2.39';

const NAMES = {
  docs: {
    admin: 'Ada Lovelace',
    adminEmail: 'ada@example.com',
    member: 'Grace Hopper',
    memberEmail: 'grace@example.com',
    website: 'Acme Notes',
    manualWebsite: 'Travel Planner',
    agent: 'Research assistant',
    otherAgent: 'Shopping helper',
    newAgent: 'Calendar agent',
    newWebsite: 'Recipe Box',
    passkey: 'Laptop',
    apiKey: 'Deploy script',
    webhook: 'Security alerts channel',
    newApiKey: 'Nightly backup',
    askingAgent: 'Travel booking agent',
    payee: 'Acme Stationery',
    notebook: 'Q3 drafts',
    bindingMessage: 'Order 1142',
  },
  stress: {
    admin: 'Maximiliana Wolfeschlegelsteinhausenbergerdorff-Featherstonehaugh-Cholmondeley',
    adminEmail: 'maximiliana.wolfeschlegelsteinhausenbergerdorff@informatique.universite-de-recherche-exemple.example',
    member: 'Bartholomew_Featherstonehaugh-Cholmondeley_Worcestershire_Plantagenet_the_Third',
    memberEmail: 'bartholomew.featherstonehaugh.cholmondeley.worcestershire@very-long-subdomain.example.org',
    website: 'Acme Notes — collaborative note-taking for distributed research teams around the world',
    manualWebsite: 'TravelPlannerEnterpriseBookingAndExpenseReconciliationPortalForGlobalTeams',
    agent: 'Research assistant for the quarterly procurement and compliance review team (EMEA)',
    otherAgent: 'quarterly-procurement-compliance-review-research-assistant-agent-v2-production',
    newAgent: 'Calendar-and-meeting-scheduling-agent-for-the-executive-assistants-office-2025',
    newWebsite: 'RecipeBoxMealPlanningAndGroceryListSynchronisationServiceForLargeFamilies',
    passkey: 'YubiKey-5C-NFC-serial-23456789-kept-in-the-top-drawer-of-the-office-desk',
    apiKey: 'Nightly-infrastructure-reconciliation-job-for-the-platform-engineering-team-eu',
    webhook: 'Security-operations-centre-alert-ingestion-pipeline-for-the-identity-platform-team',
    newApiKey: 'Quarterly compliance export for the procurement and audit committee (read only)',
    askingAgent: 'Travel-booking-and-expense-reconciliation-agent-for-the-quarterly-review-team-v3',
    payee: 'Featherstonehaugh-Cholmondeley-Office-Supplies-Wholesale-and-Distribution-GmbH-und-Co-KG',
    notebook: 'Quarterly procurement and compliance review (EMEA): drafts, minutes and archived attachments',
    bindingMessage: 'Order 1142 — office supplies for the quarterly procurement and compliance review',
  },
} as const;

export interface Seed {
  data: DataSet;
  admin: AccountRecord;
  member: AccountRecord;
  /** A website with several redirect URIs, whose sign-ins fill the agent's history. */
  party: Party;
  manualClientId: string;
  /** An agent and a website whose secrets are rotated (the party's stay valid for the sign-ins). */
  rotated: { agentId: string; clientId: string };
  /** A key-bound agent (docs/design.md §16): its page shows the key's thumbprint instead of a secret. */
  keyAgentId: string;
  /** A website that signs with keys (private_key_jwt): its page lists its keys and the form that replaces them. */
  keyClientId: string;
  /** A resource server with its scopes, each with a description: its page has the Scopes field. */
  resourceServerId: string;
  /** A one-time link of each kind, for their pages (GET shows them without using them). */
  links: { invite: string; setup: string; verify: string };
  /** A webhook with a delivery log: one delivered, one to be tried again, one waiting. */
  webhookId: string;
  /** A webhook paused by its breaker: its receiver stopped answering. */
  pausedWebhookId: string;
  /** An MCP server registered as a resource server, with scopes of its own (docs/design.md §13). */
  resource: { uri: string; scopes: string };
  /**
   * An agent of the admin whose policy says "Ask me for a new website" (with every other field
   * set), with approvals decided before; `party`'s website is not listed, so it asks for it.
   */
  asking: Party & { decidedApprovalId: string };
  /**
   * The party's website asks whether the admin's agent may pay (docs/design.md §21): the id of
   * the action approval waiting for the admin, a new one only when none waits (the clock moves).
   */
  pendingAction: () => Promise<string>;
  /** An action of the admin's agent the admin approved: its approval. */
  decidedActionId: string;
  /** The owner (the admin) denies the approval the request `requestId` waits on. */
  denyApprovalOf: (requestId: string) => Promise<void>;
  names: (typeof NAMES)[DataSet];
}

/**
 * Fills the database: an admin and a member, 30 more accounts, links, sessions with long user
 * agents, websites (one with several redirect URIs, one with manual approval), agents, real
 * sign-ins and more history than one page, and more console events than one page.
 * `callback` is the website's real redirect URI (the sign-ins go there).
 */
export async function seedConsole(
  ctx: Context,
  options: { data: DataSet; baseUrl: string; callback: { uri: string; origin: string } },
): Promise<Seed> {
  const names = NAMES[options.data];
  const { callback } = options;
  const admin = await createAccount(ctx, {
    email: names.adminEmail,
    name: names.admin,
    role: 'admin',
    password: PASSWORD,
    emailVerified: true,
  });
  const member = await createAccount(ctx, { email: names.memberEmail, name: names.member, role: 'member' });
  // More accounts than fit on a screen (stress: with long addresses and names); a few colleagues
  // for the docs' pictures. No passwords: argon2 would make the seed slow.
  const others =
    options.data === 'stress'
      ? Array.from({ length: 30 }, (_, n) => {
          const i = n + 1;
          return {
            email: `person.number.${i}.with.a.rather.long.address@department-${i}.example.org`,
            name: i % 3 === 0 ? `Person${i}WithAVeryLongNameWithoutAnySpacesAtAllForTheTable` : `Person number ${i}`,
          };
        })
      : ['Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth'].map((name) => ({
          email: `${name.split(' ')[0]!.toLowerCase()}@example.com`,
          name,
        }));
  for (const [n, person] of others.entries()) {
    await createAccount(ctx, { ...person, role: (n + 1) % 7 === 0 ? 'admin' : 'member' });
  }
  const invite = await issueLink(ctx, 'invite', { role: 'member', createdBy: admin.id });
  const setup = await issueLink(ctx, 'setup', { accountId: member.id, createdBy: admin.id });
  const verify = await issueLink(ctx, 'verify', { accountId: member.id, email: member.email });
  for (let i = 0; i < 3; i++) await issueLink(ctx, 'invite', { role: i ? 'member' : 'admin', createdBy: admin.id });
  await issueLink(ctx, 'invite', { role: 'member', createdBy: member.id });
  // Sessions on other devices, with the user agents browsers really send.
  for (const userAgent of [LONG_UA, `${LONG_UA} Edg/127.0.2651.98`, 'curl/8.5.0', AGENT_UA])
    await startSession(ctx, admin, 'password', { ip: '2001:db8:85a3:8d3:1319:8a2e:370:7348', userAgent });

  const { client, secret: clientSecret } = await createOwnedClient(ctx, admin, {
    name: names.website,
    redirect_uris: [
      callback.uri,
      `${callback.origin}/another/callback/path/for/the/staging/environment`,
      'https://notes.acme-collaborative-research.example/oauth2/callback/agentauth/production-eu-west-1',
      'https://notes.acme-collaborative-research.example/oauth2/callback/agentauth/production-us-east-2',
    ].join('\n'),
  });
  if (clientSecret === null) throw new Error('a confidential website has a secret');
  const { client: manual } = await createOwnedClient(ctx, admin, {
    name: names.manualWebsite,
    redirect_uris: `${callback.origin}/travel`,
    approval: 'manual',
  });
  for (let i = 1; i <= 4; i++)
    await createOwnedClient(ctx, i % 2 ? admin : member, {
      name: `${names.website.slice(0, 20)} ${i}`,
      redirect_uris: `https://site-${i}.example/callback`,
    });
  const { agent, secret: agentSecret } = await createOwnedAgent(ctx, admin, names.agent);
  const { agent: otherAgent } = await createOwnedAgent(ctx, admin, names.otherAgent);
  for (let i = 1; i <= 3; i++) await createOwnedAgent(ctx, member, `${names.agent.slice(0, 30)} ${i}`);
  const keyAgent = await createOwnedKeyBoundAgent(
    ctx,
    admin,
    `${names.agent.slice(0, 40)} (key)`,
    agentKeyOf(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' })),
  );
  const party: Party = { clientId: client.id, clientSecret, redirectUri: callback.uri, agentId: agent.id, agentSecret };
  const { keyClientId, resourceServerId } = await seedKeysAndScopes(ctx, admin, names.website, callback.origin);

  // Real sign-ins, then earlier ones: more than one page of history (20) and a month of chart.
  const target = { baseUrl: options.baseUrl } as TestServer;
  for (let i = 0; i < 3; i++) await obtainTokens(target, party);
  const now = ctx.clock();
  for (let day = 1; day < 30; day++) {
    for (let n = 0; n < 1 + ((day * 7) % 3); n++) {
      await ctx.store.signIns.record({
        at: now - day * 86400 - n * 600,
        agent_id: agent.id,
        request_id: `req_earlier${day}_${n}`,
        client_id: client.id,
        model: 'claude-sonnet-4-20250514-with-extended-thinking-and-a-long-model-identifier',
        ip: '2001:db8:85a3:8d3:1319:8a2e:370:7348',
        user_agent: AGENT_UA,
        outcome: day % 9 === 0 ? 'invalid_credentials' : 'authenticated',
      });
    }
  }
  // More console events than the admin's page of 50, with long details.
  for (let i = 0; i < 60; i++)
    await recordConsoleEvent(
      { store: ctx.store, clock: () => now - 3600 - i * 60 },
      i % 2 ? admin : member,
      i % 3 ? 'agent.rotate_secret' : 'website.create',
      i % 3 ? agent.id : client.id,
      '2001:db8:85a3:8d3:1319:8a2e:370:7348',
      i % 3 ? 'grace 86400 s' : names.website,
    );
  // API keys: one a script uses (its call is in the activity), a revoked one, an expired one, a member's.
  // Just signed in: making a key needs a fresh authentication.
  const adminActor = consoleActor(admin, '2001:db8::1', { authenticatedAt: now });
  const { secret: scriptSecret } = await createApiKey(ctx, adminActor, {
    name: names.apiKey,
    access: 'write',
    reach: 'all',
  });
  const used = await fetch(`${options.baseUrl}/api/admin/v1/agents`, {
    headers: { authorization: `Bearer ${scriptSecret}`, 'user-agent': AGENT_UA },
  });
  if (!used.ok) throw new Error(`the seeded API key could not list agents: ${used.status}`);
  const { key: old } = await createApiKey(ctx, adminActor, {
    name: 'Old deploy script',
    access: 'write',
    reach: 'own',
  });
  await revokeApiKey(ctx, adminActor, old.id);
  await createApiKey({ ...ctx, clock: () => now - 100 * 86400 }, adminActor, {
    name: 'Last quarter’s report',
    access: 'read',
    reach: 'own',
    expiresInDays: 30,
  });
  await createApiKey(ctx, consoleActor(member, null, { authenticatedAt: now }), {
    name: `${names.apiKey.slice(0, 30)} (member)`,
    access: 'read',
    reach: 'own',
  });
  const { webhookId, pausedWebhookId } = await seedWebhooks(ctx, admin, names.webhook);
  const asking = await seedApprovals(ctx, admin, party, names.askingAgent, options.baseUrl);
  const { pendingAction, decidedActionId } = await seedActions(ctx, admin, party, names, options.baseUrl);
  const resource = 'https://mcp.acme-notes.example/mcp';
  await registerClient(ctx, {
    name: `${names.website} MCP`,
    redirectUris: [],
    resources: [resource],
    scopes: [
      { name: 'notes:read', description: 'Read your notes and notebooks' },
      { name: 'notes:write', description: 'Create, change and delete notes' },
    ],
  });
  return {
    data: options.data,
    admin,
    member,
    party,
    manualClientId: manual.id,
    rotated: { agentId: otherAgent.id, clientId: manual.id },
    keyAgentId: keyAgent.id,
    keyClientId,
    resourceServerId,
    links: { invite: invite.path, setup: setup.path, verify: verify.path },
    webhookId,
    pausedWebhookId,
    asking,
    pendingAction,
    decidedActionId,
    denyApprovalOf: async (requestId) => {
      const { approval_id: approvalId } = (await ctx.store.requests.find(requestId))!;
      await decideApproval(ctx, approvalId!, 'deny', admin.id);
    },
    resource: { uri: resource, scopes: 'notes:read notes:write' },
    names,
  };
}

/**
 * Sends the agent to sign in to the party's website (a real GET /authorize, then its
 * authentication, answered 202): the approval it now waits for.
 */
export async function askApproval(baseUrl: string, agent: Party): Promise<string> {
  const target = { baseUrl } as TestServer;
  const started = await fetch(
    authorizeUrl(target, {
      client_id: agent.clientId,
      redirect_uri: agent.redirectUri,
      response_type: 'code',
      scope: 'openid email profile',
      state: 'page-tour',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }),
  );
  const requestId = /<meta name="request-id" content="([^"]+)">/.exec(await started.text())?.[1];
  if (!requestId) throw new Error(`the authorization page answered ${started.status} without a request`);
  const answer = await authenticate(target, agent, requestId, 'claude-sonnet-4-20250514');
  if (answer.status !== 202) throw new Error(`the asking agent was answered ${answer.status}: ${await answer.text()}`);
  return ((await answer.json()) as { approval_id: string }).approval_id;
}

/** The asking agent with its policy, and decisions of before: approved once, allowed always, denied. */
async function seedApprovals(
  ctx: Context,
  admin: AccountRecord,
  party: Party,
  name: string,
  baseUrl: string,
): Promise<Seed['asking']> {
  const { agent, secret } = await createOwnedAgent(ctx, admin, name);
  const clients = await ctx.store.clients.list();
  const listed = clients.filter((client) => client.id !== party.clientId).slice(0, 2);
  await setAgentPolicy(ctx, agent.id, {
    websites: 'ask',
    allowed_clients: listed.map((client) => client.id),
    scope_ceiling: ['openid', 'email', 'profile'],
    credentials_expire_at: Date.UTC(2099, 11, 31) / 1000,
    max_sign_ins_per_hour: 60,
    // The party's website's actions answered without asking, up to an amount: the Policy section's actions lines.
    actions: [{ client_id: party.clientId, answer: 'always', up_to: { amount: 50, currency: 'EUR' } }],
  });
  const asking: Party = { ...party, agentId: agent.id, agentSecret: secret };
  const decisions = ['once', 'deny'] as const;
  let decidedApprovalId = '';
  for (const decision of decisions) {
    const approvalId = await askApproval(baseUrl, asking);
    await decideApproval(ctx, approvalId, decision, admin.id);
    decidedApprovalId ||= approvalId;
  }
  // One whose sign-in the person cancelled at the browser while it waited: it ends with it.
  const cancelled = (await ctx.store.approvals.find(await askApproval(baseUrl, asking)))!;
  const request = (await ctx.store.requests.find(cancelled.request_id))!;
  await ctx.store.requests.fail(
    request.id,
    request.browser_digest,
    ctx.clock(),
    'access_denied',
    'The user cancelled the authorization request.',
  );
  return { ...asking, decidedApprovalId };
}

/** The party's website's action types: a payment an owner's "up to" measures, and a deletion. */
const ACTION_TYPES: ActionType[] = [
  PAYMENT,
  {
    type: 'notebook.delete',
    description: 'Delete the notebook {notebook}',
    fields: { notebook: { type: 'string', required: true } },
  },
];

/**
 * The party's website registers its action types as its owner does in the console, and asks
 * (a real POST /bc-authorize with its credentials) whether the admin's agent, which signed in
 * there, may act: one deletion the admin approved, and payments asked when a page needs one.
 */
async function seedActions(
  ctx: Context,
  admin: AccountRecord,
  party: Party,
  names: (typeof NAMES)[DataSet],
  baseUrl: string,
): Promise<Pick<Seed, 'pendingAction' | 'decidedActionId'>> {
  await updateClient(ctx, consoleActor(admin, '2001:db8::1', { authenticatedAt: ctx.clock() }), party.clientId, {
    actions: { actionTypes: ACTION_TYPES, tokenDelivery: 'poll' },
  });
  const waiting = async () =>
    (await ctx.store.approvals.list({ accountId: admin.id, status: 'pending', now: ctx.clock(), limit: 50 })).find(
      (approval) => approval.kind === 'action' && approval.agent_id === party.agentId,
    )?.id;
  const ask = async (details: Record<string, unknown>, bindingMessage?: string) => {
    const answer = await fetch(`${baseUrl}/bc-authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: party.clientId,
        client_secret: party.clientSecret,
        scope: 'openid',
        login_hint: party.agentId,
        authorization_details: JSON.stringify([details]),
        ...(bindingMessage ? { binding_message: bindingMessage } : {}),
      }),
    });
    if (!answer.ok)
      throw new Error(`the website could not ask about an action: ${answer.status} ${await answer.text()}`);
    const id = await waiting();
    if (!id) throw new Error('the action request opened no approval');
    return id;
  };
  const decidedActionId = await ask({ type: 'notebook.delete', notebook: names.notebook });
  await decideApproval(ctx, decidedActionId, 'once', admin.id);
  const pendingAction = async () =>
    (await waiting()) ??
    ask({ type: 'payment', amount: 120, currency: 'EUR', payee: names.payee }, names.bindingMessage);
  return { pendingAction, decidedActionId };
}

/**
 * Webhooks: one with a delivery log (delivered, answered 503 and due again, waiting), and one
 * disabled after failing. The attempts are recorded as the dispatcher records them.
 */
async function seedWebhooks(
  ctx: Context,
  admin: AccountRecord,
  description: string,
): Promise<{ webhookId: string; pausedWebhookId: string }> {
  const { webhook } = await createWebhook(ctx, admin, {
    url: 'https://hooks.example.com/agentauth/events',
    description,
    events: ['agent.sign_in.succeeded', 'agent.sign_in.failed', 'agent.disabled', 'client.created'],
  });
  const failing = await createWebhook(ctx, admin, {
    url: 'https://old-receiver.example.net/webhooks/agentauth',
    events: ['*'],
  });
  await updateWebhook(ctx, admin, failing.webhook.webhook.id, { status: 'disabled' });
  // One whose receiver stopped answering: paused by the breaker, its messages waiting.
  const silent = await createWebhook(ctx, admin, {
    url: 'https://slow-receiver.example.org/hooks',
    description: 'Chat notifications',
    events: ['agent.sign_in.succeeded'],
  });
  await ctx.store.webhooks.pause(
    silent.webhook.webhook.id,
    {
      seen: 0,
      count: 5,
      until: Date.now() + 600_000,
      reason:
        '5 attempts in a row got no answer (the receiver did not answer within 10 seconds); paused for 10 minutes, then one delivery is tried',
    },
    Date.now(),
  );
  await ctx.store.webhooks.announce([
    { type: 'agent.sign_in.succeeded', data: { agent_id: 'agt_tour' } },
    { type: 'agent.sign_in.failed', data: { agent_id: 'agt_tour' } },
    { type: 'agent.disabled', data: { agent_id: 'agt_tour' } },
  ]);
  const now = Date.now();
  const claimed = await ctx.store.webhooks.claimDue('tour', now, now + 60_000, 2);
  const answers = [
    { status_code: 200, status: 'delivered' as const, next: now },
    { status_code: 503, status: 'pending' as const, next: now + 300_000 },
  ];
  for (const [i, delivery] of claimed.entries()) {
    const answer = answers[i]!;
    await ctx.store.webhooks.finishAttempt('tour', {
      attempt: {
        endpoint_id: delivery.endpoint_id,
        message_id: delivery.message_id,
        attempt: 1,
        at: now,
        duration_ms: 84 + i * 40,
        status_code: answer.status_code,
        error: null,
        request_headers: JSON.stringify({
          'content-type': 'application/json',
          'user-agent': 'agentauth-webhooks',
          'webhook-id': delivery.message_id,
          'webhook-timestamp': String(Math.floor(now / 1000)),
          'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        }),
      },
      status: answer.status,
      next_attempt_at: answer.next,
    });
  }
  return { webhookId: webhook.webhook.id, pausedWebhookId: silent.webhook.webhook.id };
}

/** Who looks at a page: someone not signed in, or the admin (signed in with a password). */
export type Viewer = 'visitor' | 'admin';

export interface PageState {
  /** The screenshot's file name without .png (the phone's adds -phone); also the audit's page name. */
  name: string;
  viewer: Viewer;
  /** The console route this state shows (for the check that every GET route is visited). */
  route?: string;
  /** Brings the page to the state; it is then left open for the screenshot or the audit. */
  visit(page: Page): Promise<void>;
}

/**
 * Signs the admin in with the password, then adds passkeys with Chromium's virtual authenticator
 * (CDP), as a person would on the account page.
 */
export async function signInAdmin(context: BrowserContext, page: Page, baseUrl: string, seed: Seed): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel('Email', { exact: true }).fill(seed.admin.email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/console');
  const cdp = await context.newCDPSession(page);
  // One authenticator per passkey: the page excludes the credentials the account already has.
  for (const name of [seed.names.passkey, 'Phone', `${seed.names.passkey.slice(0, 24)} (backup)`]) {
    const authenticatorId = await addVirtualAuthenticator(cdp);
    await page.goto(`${baseUrl}/console/account`);
    await page.locator('#passkey-name').fill(name);
    await page.locator('#passkey-register').click();
    await page.waitForURL(/notice=passkey_added/);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
  }
  await cdp.detach();
}

/**
 * A website of the admin that signs with keys (two keys: RSA and Ed25519, one with a long kid)
 * and a resource server with scopes, registered as the operator does (the server the tour runs
 * need not accept key-signed clients for their pages to show).
 */
async function seedKeysAndScopes(ctx: Context, admin: AccountRecord, website: string, origin: string) {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
  const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const { client: keyClient } = await createClient(ctx, operator(), {
    name: `${website.slice(0, 40)} (keys)`,
    redirectUris: [`${origin}/keys/callback`],
    accountId: admin.id,
    keys: {
      jwks: {
        keys: [
          { ...rsa, kid: 'production-signing-key-2026-11-rotated-quarterly-by-the-platform-team', alg: 'RS256' },
          { ...ed, kid: 'ed-1' },
        ],
      },
    },
  });
  const { client: resourceServer } = await createClient(ctx, operator(), {
    name: `${website.slice(0, 40)} MCP server`,
    redirectUris: [],
    resources: ['https://mcp.notes.example/mcp'],
    accountId: admin.id,
    scopes: [
      { name: 'notes:read', description: 'Read your notes and the notebooks they are in' },
      { name: 'notes:write', description: 'Create, change and delete notes in every notebook you can open' },
    ],
  });
  return { keyClientId: keyClient.id, resourceServerId: resourceServer.id };
}

/**
 * Every state, the authorization page's first. `advanceClock` moves the server's clock (the
 * expired request); `baseUrl` is the server's.
 */
export function pageTour(seed: Seed, baseUrl: string, advanceClock: (seconds: number) => void): PageState[] {
  const { party } = seed;
  const server = { baseUrl } as TestServer;
  const authorizePath = (clientId: string, redirectUri: string, extra: Record<string, string> = {}) =>
    authorizeUrl(server, {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid email profile',
      state: 'page-tour',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
  const requestIdOf = async (page: Page) => (await page.locator('meta[name="request-id"]').getAttribute('content'))!;
  const agentPath = `/console/agents/${party.agentId}`;
  const websitePath = `/console/websites/${party.clientId}`;
  const get = (name: string, viewer: Viewer, path: string, route?: string): PageState => ({
    name,
    viewer,
    route,
    visit: async (page) => {
      await page.goto(`${baseUrl}${path}`);
    },
  });
  /** Submits the form posting to `action` (its fields filled first) and waits for the answer page. */
  const submit = async (page: Page, action: string, fields: Record<string, string> = {}) => {
    const form = page.locator(`form[action="${action}"]`).first();
    for (const [name, value] of Object.entries(fields)) await form.locator(`[name="${name}"]`).fill(value);
    // Some actions ask "Are you sure?" first (console.js); the person says yes.
    const yes = (dialog: Dialog) => void dialog.accept();
    page.on('dialog', yes);
    try {
      await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST'),
        form.locator('button[type="submit"]').first().click(),
      ]);
      await page.waitForLoadState();
    } finally {
      page.off('dialog', yes);
    }
  };

  return [
    get('authorize', 'visitor', authorizePath(party.clientId, party.redirectUri).replace(baseUrl, '')),
    // For an MCP server with scopes of its own: the page names the server and says what each scope allows.
    get(
      'authorize-resource',
      'visitor',
      authorizePath(party.clientId, party.redirectUri, {
        scope: `openid email ${seed.resource.scopes}`,
        resource: seed.resource.uri,
      }).replace(baseUrl, ''),
    ),
    {
      // After the agent authenticated: the page's script says who signed in and posts the
      // continue form; the post is answered 204 No Content, so the browser stays on the page.
      name: 'authorize-signed-in',
      viewer: 'visitor',
      visit: async (page) => {
        const posted = new Promise<void>((resolve) => {
          void page.route('**/authorize/continue', async (route) => {
            await route.fulfill({ status: 204 });
            resolve();
          });
        });
        await page.goto(authorizePath(party.clientId, party.redirectUri));
        const answer = await authenticate(server, party, await requestIdOf(page), 'claude-sonnet-4-20250514');
        if (!answer.ok) throw new Error(`the agent could not authenticate: ${answer.status} ${await answer.text()}`);
        await Promise.race([
          posted,
          page.waitForTimeout(10_000).then(async () => {
            throw new Error(`the page never continued; it says: ${await page.locator('main').textContent()}`);
          }),
        ]);
        await page.unroute('**/authorize/continue');
      },
    },
    {
      // An agent whose owner must approve the website first: the page says whose approval it
      // waits for (docs/design.md §16).
      name: 'authorize-approval',
      viewer: 'visitor',
      visit: async (page) => {
        await page.goto(authorizePath(party.clientId, party.redirectUri));
        const answer = await authenticate(server, seed.asking, await requestIdOf(page), 'claude-sonnet-4-20250514');
        if (answer.status !== 202) throw new Error(`the asking agent was answered ${answer.status}`);
        await page.locator('#progress[data-state="approval"]').waitFor();
        await page.waitForFunction(() =>
          /Waiting for approval from /.test(document.getElementById('status')?.textContent ?? ''),
        );
      },
    },
    {
      // The owner denied it while the page waited: the page says who ended it and that nothing
      // was shared (the website hears "The agent's owner denied this sign-in.").
      name: 'authorize-denied',
      viewer: 'visitor',
      visit: async (page) => {
        await page.goto(authorizePath(party.clientId, party.redirectUri));
        const requestId = await requestIdOf(page);
        const answer = await authenticate(server, seed.asking, requestId, 'claude-sonnet-4-20250514');
        if (answer.status !== 202) throw new Error(`the asking agent was answered ${answer.status}`);
        await page.locator('#progress[data-state="approval"]').waitFor();
        await seed.denyApprovalOf(requestId);
        await page.waitForFunction(() => /Nothing was shared/.test(document.querySelector('main')?.textContent ?? ''));
      },
    },
    {
      name: 'authorize-confirm',
      viewer: 'visitor',
      visit: async (page) => {
        await page.goto(authorizePath(seed.manualClientId, `${party.redirectUri.replace('/callback', '')}/travel`));
        const requestId = await requestIdOf(page);
        await Promise.all([
          page.waitForURL((url) => url.pathname === '/authorize/continue'),
          authenticate(server, { ...party, clientId: seed.manualClientId }, requestId, 'claude-sonnet-4-20250514'),
        ]);
        await page.waitForLoadState();
      },
    },
    {
      // The request expired while the page was open: its status stream is blocked so the script
      // polls, and the poll after the clock moved reports the expiry.
      name: 'authorize-expired',
      viewer: 'visitor',
      visit: async (page) => {
        await page.route('**/api/check-status/events*', (route) => route.abort());
        await page.goto(authorizePath(party.clientId, party.redirectUri));
        advanceClock(601);
        await page.waitForResponse(
          async (response) =>
            response.url().includes('/api/check-status?') && (await response.text()).includes('request_expired'),
        );
        await page.waitForTimeout(100);
        await page.unroute('**/api/check-status/events*');
      },
    },
    get(
      'authorize-error',
      'visitor',
      '/authorize?client_id=cli_unknown&response_type=code&redirect_uri=https%3A%2F%2Fnowhere.example%2Fcb',
    ),
    get('landing', 'visitor', '/'),
    get('sign-in', 'visitor', '/console/sign-in', '/sign-in'),
    get('sign-up', 'visitor', '/console/sign-up', '/sign-up'),
    get('invitation', 'visitor', seed.links.invite, '/invitation/:token'),
    get('setup', 'visitor', seed.links.setup, '/setup/:token'),
    get('verify-email', 'visitor', seed.links.verify, '/verify-email/:token'),
    get('email-verified', 'visitor', '/console/email-verified', '/email-verified'),
    get('overview', 'admin', '/console', '/'),
    get('agents', 'admin', '/console/agents', '/agents'),
    get('agent', 'admin', agentPath, '/agents/:id'),
    get('agent-key', 'admin', `/console/agents/${seed.keyAgentId}`, '/agents/:id'),
    {
      name: 'agent-history-older',
      viewer: 'admin',
      route: '/agents/:id',
      visit: async (page) => {
        await page.goto(`${baseUrl}${agentPath}`);
        const older = page.locator('a[href*="before="]').first();
        if ((await older.count()) > 0) await page.goto(new URL((await older.getAttribute('href'))!, baseUrl).href);
      },
    },
    {
      name: 'agent-created',
      viewer: 'admin',
      route: '/agents/:id/created',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/agents`);
        await submit(page, '/console/agents', { name: seed.names.newAgent });
      },
    },
    {
      name: 'agent-secret',
      viewer: 'admin',
      // Agents' and websites' rotations share one route, registered for both by ownedRoutes.
      route: '${path}/:id/new-secret',
      visit: async (page) => {
        const path = `/console/agents/${seed.rotated.agentId}`;
        await page.goto(`${baseUrl}${path}`);
        await submit(page, `${path}/rotate`);
      },
    },
    {
      // The agent whose policy says "ask me", with a sign-in waiting: the notice, and the Policy section.
      name: 'agent-policy',
      viewer: 'admin',
      route: '/agents/:id',
      visit: async (page) => {
        await askApproval(baseUrl, seed.asking);
        await page.goto(`${baseUrl}/console/agents/${seed.asking.agentId}#policy`);
      },
    },
    {
      name: 'approvals',
      viewer: 'admin',
      route: '/approvals',
      visit: async (page) => {
        // A sign-in and an action waiting, side by side.
        await askApproval(baseUrl, seed.asking);
        await seed.pendingAction();
        await page.goto(`${baseUrl}/console/approvals`);
      },
    },
    {
      name: 'approval',
      viewer: 'admin',
      route: '/approvals/:id',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/approvals/${await askApproval(baseUrl, seed.asking)}`);
      },
    },
    get('approval-decided', 'admin', `/console/approvals/${seed.asking.decidedApprovalId}`),
    {
      // The party's website asks whether the agent may pay: the action in words, the website's own message quoted.
      name: 'approval-action',
      viewer: 'admin',
      route: '/approvals/:id',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/approvals/${await seed.pendingAction()}`);
      },
    },
    get('approval-action-decided', 'admin', `/console/approvals/${seed.decidedActionId}`),
    get('websites', 'admin', '/console/websites', '/websites'),
    get('website', 'admin', websitePath, '/websites/:id'),
    get('website-keys', 'admin', `/console/websites/${seed.keyClientId}`),
    get('website-resource-server', 'admin', `/console/websites/${seed.resourceServerId}`),
    {
      name: 'website-created',
      viewer: 'admin',
      route: '/websites/:id/created',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/websites`);
        await submit(page, '/console/websites', {
          name: seed.names.newWebsite,
          redirect_uris: 'https://recipe-box-meal-planning-and-grocery-lists.example/auth/agentauth/callback',
        });
      },
    },
    {
      name: 'website-secret',
      viewer: 'admin',
      visit: async (page) => {
        const path = `/console/websites/${seed.rotated.clientId}`;
        await page.goto(`${baseUrl}${path}`);
        await submit(page, `${path}/rotate`);
      },
    },
    get('account', 'admin', '/console/account', '/account'),
    get('api-keys', 'admin', '/console/api-keys', '/api-keys'),
    {
      name: 'api-key-created',
      viewer: 'admin',
      route: '/api-keys/:id/created',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/api-keys`);
        await submit(page, '/console/api-keys', { name: seed.names.newApiKey });
      },
    },
    get('webhooks', 'admin', '/console/admin/webhooks', '/admin/webhooks'),
    get('webhook', 'admin', `/console/admin/webhooks/${seed.webhookId}`, '/admin/webhooks/:id'),
    get('webhook-paused', 'admin', `/console/admin/webhooks/${seed.pausedWebhookId}`, '/admin/webhooks/:id'),
    {
      name: 'webhook-secret',
      viewer: 'admin',
      route: '/admin/webhooks/:id/secret',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/admin/webhooks`);
        await page.locator('input[name="event.agent.created"]').check();
        await submit(page, '/console/admin/webhooks', { url: 'https://hooks.example.org/new' });
      },
    },
    get('confirm', 'admin', '/console/account/confirm', '/account/confirm'),
    get('admin', 'admin', '/console/admin', '/admin'),
    {
      name: 'admin-setup-link',
      viewer: 'admin',
      route: '/admin/accounts/:id/setup-link',
      visit: async (page) => {
        await page.goto(`${baseUrl}/console/admin`);
        await submit(page, `/console/admin/accounts/${seed.member.id}/setup-link`);
      },
    },
    get('admin-links', 'admin', '/console/admin/links', '/admin/links'),
    get('admin-agents', 'admin', '/console/admin/agents', '/admin/agents'),
    get('admin-websites', 'admin', '/console/admin/websites', '/admin/websites'),
    get('admin-events', 'admin', '/console/admin/events', '/admin/events'),
    get('admin-signing-keys', 'admin', '/console/admin/signing-keys', '/admin/signing-keys'),
    get('not-found', 'admin', '/console/agents/agt_no_such_agent'),
  ];
}
