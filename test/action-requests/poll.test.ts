/**
 * Owners approve actions, the website's side in poll mode (OpenID CIBA Core 1.0 with RFC 9396
 * authorization details; docs/design.md §21), over real HTTP with a client library nobody here
 * wrote: openid-client v6 asks at /bc-authorize, the owner decides through the console's approval
 * form (with their password), and the library polls /token for a token carrying the approved
 * action. A denial, an expiry, slow_down, the policy's answers, a foreign client's attempt, a
 * second token request, the flood limits and bad input each end as the standard says.
 */
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { setAgentStatus } from '../../src/domain/agents.ts';
import { revokeGrants } from '../../src/domain/revocation.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { CIBA, PAY_ACME, PAYMENT } from '../helpers/action-requests.ts';
import { type ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { obtainTokens, type Party, postForm } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
let website: { clientId: string; clientSecret: string; redirectUri: string };

beforeAll(async () => {
  server = await startTestServer({ env: { ACTION_APPROVALS: 'true', DYNAMIC_REGISTRATION: 'true' } });
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  website = await actionWebsite('Acme Shop');
});
afterAll(() => server?.close());

/** A website that registered the payment type (poll mode). */
async function actionWebsite(name: string) {
  const made = await server.createClient({ name, redirectUris: ['https://shop.example/callback'] });
  await server.ctx.store.clients.update(made.clientId, {
    action_types: [PAYMENT],
    backchannel_token_delivery_mode: 'poll',
  });
  return made;
}

/** An agent of the owner that signed in to the website (so it holds a live grant there). */
async function signedInAgent(name = 'Shopping assistant'): Promise<Party & { idToken: string }> {
  const { agent, secret } = await createOwnedAgent(server.ctx, owner, name);
  const party = { ...website, agentId: agent.id, agentSecret: secret };
  const tokens = await obtainTokens(server, party, { scope: 'openid email' });
  return { ...party, idToken: tokens.id_token! };
}

/** What the website configures: discovery, client_secret_basic (openid-client's default), HS256 ID tokens. */
function discover(site = website): Promise<client.Configuration> {
  return client.discovery(
    new URL(server.baseUrl),
    site.clientId,
    { id_token_signed_response_alg: 'HS256' },
    client.ClientSecretBasic(site.clientSecret),
    { execute: [client.allowInsecureRequests] },
  );
}

/** POST /bc-authorize with client_secret_post, as a form (a parameter given as undefined is left out). */
function ask(params: Record<string, string | undefined>, site = website) {
  const given = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return postForm(server, '/bc-authorize', {
    client_id: site.clientId,
    client_secret: site.clientSecret,
    ...Object.fromEntries(given),
  });
}

/** POST /token with the CIBA grant. */
function poll(authReqId: string, site = website) {
  return postForm(server, '/token', {
    grant_type: CIBA,
    auth_req_id: authReqId,
    client_id: site.clientId,
    client_secret: site.clientSecret,
  });
}

const askFor = (agent: Party, extra: Record<string, string | undefined> = {}) =>
  ask({
    scope: 'openid',
    login_hint: agent.agentId,
    binding_message: 'Order 1142',
    authorization_details: JSON.stringify(PAY_ACME),
    ...extra,
  });

/** The approval waiting for the agent's action request, as the console lists it. */
async function waitingApproval(agentId: string) {
  const waiting = await server.ctx.store.approvals.list({
    accountId: owner.id,
    status: 'pending',
    now: server.clock(),
    limit: 50,
  });
  const approval = waiting.find((each) => each.agent_id === agentId && each.kind === 'action');
  if (!approval) throw new Error(`no action approval waits for ${agentId}`);
  return approval;
}

/** The owner decides on the console's approval page with their password (a real form post). */
async function decide(approvalId: string, decision: 'once' | 'deny') {
  await session.get(`/console/approvals/${approvalId}`);
  const page = await session.submit(`/console/approvals/${approvalId}/decide`, { decision, password: TEST_PASSWORD });
  expect(page.posted.status).toBe(303);
}

const body = async (response: Response) => (await response.json()) as Record<string, unknown>;

describe('a website asks, the owner decides, openid-client gets the answer', () => {
  it('approved: the token carries the approved authorization_details, introspection too; tokens once', async () => {
    const agent = await signedInAgent();
    const config = await discover();
    const asked = await client.initiateBackchannelAuthentication(config, {
      scope: 'openid',
      login_hint: agent.agentId,
      binding_message: 'Order 1142',
      authorization_details: JSON.stringify(PAY_ACME),
    });
    expect(asked.expires_in).toBe(300);
    expect(asked.interval).toBe(5);
    expect(asked.auth_req_id).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const approval = await waitingApproval(agent.agentId);
    expect(approval).toMatchObject({
      binding_message: 'Order 1142',
      authorization_details: PAY_ACME,
      client_id: website.clientId,
    });
    // Nothing is stored of the auth_req_id but its digest.
    expect(JSON.stringify(await server.ctx.store.actionRequests.find(approval.request_id))).not.toContain(
      asked.auth_req_id,
    );
    await decide(approval.id, 'once');

    // The library waits `interval` seconds before its first poll; the test shortens it.
    const tokens = await client.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0.01 });
    expect(tokens.authorization_details).toEqual(PAY_ACME);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.expires_in).toBeLessThanOrEqual(300);
    expect(tokens.scope).toBe('openid');
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ sub: agent.agentId, aud: website.clientId, authorization_details: PAY_ACME });
    expect(claims.exp! - claims.iat!).toBe(300);
    const idToken = tokens.claims()!;
    expect(idToken.sub).toBe(agent.agentId);
    expect(idToken.auth_time).toBe(server.clock());

    const introspected = await client.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, sub: agent.agentId, authorization_details: PAY_ACME });

    // Tokens issue once: the same auth_req_id again is invalid_grant.
    const again = await poll(asked.auth_req_id);
    expect(again.status).toBe(400);
    expect(await body(again)).toMatchObject({ error: 'invalid_grant' });
    // The history records the decision and the issue.
    const history = await server.ctx.store.signIns.page({ limit: 20, agentId: agent.agentId });
    expect(history.map((row) => row.outcome)).toEqual(
      expect.arrayContaining(['action_pending', 'action_approved', 'action_token_issued']),
    );
  });

  it('denied by the owner: access_denied, to openid-client and to a plain poll', async () => {
    const agent = await signedInAgent();
    const config = await discover();
    const asked = await client.initiateBackchannelAuthentication(config, {
      scope: 'openid',
      login_hint: agent.agentId,
      authorization_details: JSON.stringify(PAY_ACME),
    });
    await decide((await waitingApproval(agent.agentId)).id, 'deny');
    await expect(client.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0.01 })).rejects.toMatchObject(
      {
        error: 'access_denied',
      },
    );
    const response = await poll(asked.auth_req_id);
    expect(response.status).toBe(400);
    expect(await body(response)).toMatchObject({ error: 'access_denied' });
  });

  it('an id_token_hint names the agent as well as its sub', async () => {
    const agent = await signedInAgent();
    const response = await askFor(agent, { login_hint: undefined, id_token_hint: agent.idToken });
    expect(response.status).toBe(200);
    expect((await waitingApproval(agent.agentId)).client_id).toBe(website.clientId);
  });
});

describe('polling', () => {
  it('pending, then slow_down for a poll sooner than the interval (which grows by 5), then pending again', async () => {
    const agent = await signedInAgent();
    const asked = (await body(await askFor(agent))) as { auth_req_id: string };
    const first = await poll(asked.auth_req_id);
    expect(first.status).toBe(400);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(await body(first)).toMatchObject({ error: 'authorization_pending' });
    expect(await body(await poll(asked.auth_req_id))).toMatchObject({ error: 'slow_down' });
    server.clock.advance(5);
    // The interval is now 10 seconds: 5 later is still too soon.
    expect(await body(await poll(asked.auth_req_id))).toMatchObject({ error: 'slow_down' });
    server.clock.advance(15);
    expect(await body(await poll(asked.auth_req_id))).toMatchObject({ error: 'authorization_pending' });
  });

  it('expired: expired_token, and the owner can no longer decide', async () => {
    const agent = await signedInAgent();
    const asked = (await body(await askFor(agent, { requested_expiry: '30' }))) as {
      auth_req_id: string;
      expires_in: number;
    };
    expect(asked.expires_in).toBe(30);
    const approval = await waitingApproval(agent.agentId);
    server.clock.advance(31);
    const response = await poll(asked.auth_req_id);
    expect(response.status).toBe(400);
    expect(await body(response)).toMatchObject({ error: 'expired_token' });
    await session.get(`/console/approvals/${approval.id}`);
    const late = await session.post(`/console/approvals/${approval.id}/decide`, {
      decision: 'once',
      password: TEST_PASSWORD,
    });
    expect(late.status).toBe(409);
    expect((await server.ctx.store.actionRequests.find(approval.request_id))?.status).not.toBe('approved');
  });

  it("another client's auth_req_id, and an unknown one, are invalid_grant", async () => {
    const agent = await signedInAgent();
    const asked = (await body(await askFor(agent))) as { auth_req_id: string };
    const other = await actionWebsite('Other Shop');
    expect(await body(await poll(asked.auth_req_id, other))).toMatchObject({ error: 'invalid_grant' });
    expect(await body(await poll('x'.repeat(43)))).toMatchObject({ error: 'invalid_grant' });
  });
});

describe("the owner's policy answers for them", () => {
  it('always up to 50 EUR: 20 EUR is approved at once; never: access_denied; both recorded', async () => {
    const agent = await signedInAgent();
    const always = { client_id: website.clientId, answer: 'always' as const, up_to: { amount: 50, currency: 'EUR' } };
    await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, actions: [always] });
    const allowed = (await body(await askFor(agent))) as { auth_req_id: string };
    const tokens = await poll(allowed.auth_req_id);
    expect(tokens.status).toBe(200);
    expect(await body(tokens)).toMatchObject({ authorization_details: PAY_ACME, token_type: 'Bearer' });

    await setAgentPolicy(server.ctx, agent.agentId, {
      ...DEFAULT_POLICY,
      actions: [{ client_id: website.clientId, answer: 'never' }],
    });
    const refused = (await body(await askFor(agent))) as { auth_req_id: string };
    expect(await body(await poll(refused.auth_req_id))).toMatchObject({ error: 'access_denied' });
    const history = await server.ctx.store.signIns.page({ limit: 20, agentId: agent.agentId });
    expect(history.map((row) => row.outcome)).toEqual(
      expect.arrayContaining(['action_allowed_by_policy', 'action_denied_by_policy']),
    );
  });
});

describe('who may be asked about', () => {
  it('a client the agent never signed in to, an unknown sub, a disabled agent, a revoked grant: one answer', async () => {
    const agent = await signedInAgent();
    const stranger = await actionWebsite('Stranger Shop');
    const answers: Array<Record<string, unknown>> = [];
    const refused = async (response: Response) => {
      expect(response.status).toBe(400);
      answers.push(await body(response));
    };
    await refused(
      await ask(
        { scope: 'openid', login_hint: agent.agentId, authorization_details: JSON.stringify(PAY_ACME) },
        stranger,
      ),
    );
    await refused(await askFor({ ...agent, agentId: 'agt_nobody' }));
    const disabled = await signedInAgent('Disabled agent');
    await setAgentStatus(server.ctx, disabled.agentId, 'disabled');
    await refused(await askFor(disabled));
    const revoked = await signedInAgent('Revoked agent');
    await revokeGrants(server.ctx, { agent_id: revoked.agentId, client_id: website.clientId });
    await refused(await askFor(revoked));
    // An ID token issued to another client names nobody here either.
    await refused(
      await ask(
        { scope: 'openid', id_token_hint: agent.idToken, authorization_details: JSON.stringify(PAY_ACME) },
        stranger,
      ),
    );
    expect(answers[0]).toMatchObject({ error: 'unknown_user_id' });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });

  it('an agent that signed in again with a wider scope may be asked for it (its newest grant covers it)', async () => {
    const { agent, secret } = await createOwnedAgent(server.ctx, owner, 'Twice signed in');
    const party = { ...website, agentId: agent.id, agentSecret: secret };
    await obtainTokens(server, party, { scope: 'openid' });
    await obtainTokens(server, party, { scope: 'openid email profile' });
    expect((await askFor(party, { scope: 'openid profile' })).status).toBe(200);
  });

  it('a wrong client secret is invalid_client (401), as at /token', async () => {
    const agent = await signedInAgent();
    const wrong = await ask(
      { scope: 'openid', login_hint: agent.agentId, authorization_details: JSON.stringify(PAY_ACME) },
      { ...website, clientSecret: 'wrong' },
    );
    expect(wrong.status).toBe(401);
    expect(await body(wrong)).toMatchObject({ error: 'invalid_client' });
  });
});

describe('flooding an owner', () => {
  it('a sixth pending request for one agent at one website is 429 with Retry-After, and the owner is not asked', async () => {
    const agent = await signedInAgent('Busy agent');
    for (let i = 0; i < 5; i++) expect((await askFor(agent)).status).toBe(200);
    const sixth = await askFor(agent);
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await body(sixth)).toMatchObject({ error: 'too_many_requests' });
    const waiting = await server.ctx.store.approvals.list({
      accountId: owner.id,
      status: 'pending',
      now: server.clock(),
      limit: 100,
    });
    expect(waiting.filter((each) => each.agent_id === agent.agentId)).toHaveLength(5);
  });
});

describe('bad input gets the documented error, never a 500', () => {
  let agent: Party;
  beforeAll(async () => {
    agent = await signedInAgent('Input agent');
  });
  const cases: Array<[string, Record<string, string | undefined>, number, string]> = [
    ['no scope', { scope: undefined }, 400, 'invalid_request'],
    ['a scope without openid', { scope: 'email' }, 400, 'invalid_scope'],
    ['a scope beyond the grant', { scope: 'openid profile' }, 400, 'invalid_scope'],
    ['no hint', { login_hint: undefined }, 400, 'invalid_request'],
    ['two hints', { id_token_hint: 'x.y.z' }, 400, 'invalid_request'],
    ['a garbage id_token_hint', { login_hint: undefined, id_token_hint: 'not-a-jwt' }, 400, 'unknown_user_id'],
    ['a binding_message of 101 characters', { binding_message: 'x'.repeat(101) }, 400, 'invalid_binding_message'],
    [
      'a binding_message with a text-direction override',
      { binding_message: 'Pay \u202eEMCA' },
      400,
      'invalid_binding_message',
    ],
    ['a binding_message with a line break', { binding_message: 'Pay\nnow' }, 400, 'invalid_binding_message'],
    ['requested_expiry too short', { requested_expiry: '5' }, 400, 'invalid_request'],
    ['requested_expiry not a number', { requested_expiry: '1e3' }, 400, 'invalid_request'],
    ['no authorization_details', { authorization_details: undefined }, 400, 'invalid_request'],
    ['authorization_details not JSON', { authorization_details: '[{' }, 400, 'invalid_authorization_details'],
    ['an unregistered type', { authorization_details: '[{"type":"delete"}]' }, 400, 'invalid_authorization_details'],
    [
      'a wrong field type',
      { authorization_details: '[{"type":"payment","amount":"20","currency":"EUR","payee":"A"}]' },
      400,
      'invalid_authorization_details',
    ],
    ['login_hint_token', { login_hint_token: 'x' }, 400, 'invalid_request'],
    ['user_code', { user_code: '1234' }, 400, 'invalid_request'],
    ['acr_values', { acr_values: 'urn:x' }, 400, 'invalid_request'],
    ['a signed request', { request: 'x.y.z' }, 400, 'invalid_request'],
    ['a binding_message far too long for the schema', { binding_message: 'x'.repeat(5000) }, 400, 'invalid_request'],
  ];
  it.each(cases)('%s', async (_name, extra, status, error) => {
    const response = await askFor(agent, extra);
    expect(response.status).toBe(status);
    expect(await body(response)).toMatchObject({ error });
  });

  it('a parameter sent twice, or a JSON array where a string goes, is invalid_request', async () => {
    const twice = await fetch(`${server.baseUrl}/bc-authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${website.clientId}&client_secret=${website.clientSecret}&scope=openid&login_hint=${agent.agentId}&login_hint=${agent.agentId}&authorization_details=${encodeURIComponent(JSON.stringify(PAY_ACME))}`,
    });
    expect(twice.status).toBe(400);
    expect(await body(twice)).toMatchObject({ error: 'invalid_request' });
    const json = await fetch(`${server.baseUrl}/bc-authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: website.clientId,
        client_secret: website.clientSecret,
        scope: 'openid',
        login_hint: agent.agentId,
        authorization_details: PAY_ACME,
      }),
    });
    expect(json.status).toBe(400);
    expect(await body(json)).toMatchObject({ error: 'invalid_request' });
  });

  it('/token with the CIBA grant and no auth_req_id is invalid_request', async () => {
    const response = await postForm(server, '/token', {
      grant_type: CIBA,
      client_id: website.clientId,
      client_secret: website.clientSecret,
    });
    expect(response.status).toBe(400);
    expect(await body(response)).toMatchObject({ error: 'invalid_request' });
  });
});

describe('registration while on', () => {
  it('a client registering itself may name the CIBA grant among its grant_types', async () => {
    const register = (grantTypes: string[]) =>
      fetch(`${server.baseUrl}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Self-registered Shop',
          redirect_uris: ['https://self.example/callback'],
          grant_types: grantTypes,
          backchannel_token_delivery_mode: 'poll',
        }),
      });
    expect((await register(['authorization_code', 'refresh_token', CIBA])).status).toBe(201);
    const unknown = await register(['authorization_code', 'urn:example:unknown']);
    expect(unknown.status).toBe(400);
    expect(await body(unknown)).toMatchObject({ error: 'invalid_client_metadata' });
  });
});

describe('discovery while on', () => {
  it('publishes the endpoint, the modes, the grant and the registered types', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = await body(await fetch(`${server.baseUrl}${path}`));
      expect(metadata).toMatchObject({
        backchannel_authentication_endpoint: `${server.baseUrl}/bc-authorize`,
        backchannel_token_delivery_modes_supported: ['poll', 'ping'],
        backchannel_user_code_parameter_supported: false,
        authorization_details_types_supported: ['payment'],
      });
      expect(metadata.grant_types_supported).toContain(CIBA);
    }
  });
});
