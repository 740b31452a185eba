/**
 * A policy reaches the grants an agent already holds (issue 35, finding 4; docs/design.md §16),
 * over real HTTP: the owner changes the policy through the management API, and the website's
 * refresh (invalid_grant), userinfo (401) and introspection (inactive) follow. Credentials that
 * expire stop the tokens at the date, and extending them brings them back; a scope ceiling
 * revokes the grants that name a scope above it; "only listed websites" revokes the grants of
 * the websites left out; "ask" keeps what the agent holds. Revocations are announced
 * (agent.grants_revoked, reason policy) and recorded with the policy's change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { obtainTokens, type Party, postForm, type Tokens } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Call = Awaited<ReturnType<typeof accountWithKey>>['call'];

/** An owner's agent (made through the API) and a website, with tokens the website holds. */
async function ownedAgent(): Promise<{ call: Call; agentId: string; agentSecret: string }> {
  const { call } = await accountWithKey(server);
  const created = await call('POST', '/agents', { name: 'Research assistant' });
  return { call, agentId: created.json.agent.id, agentSecret: created.json.agent_secret };
}

async function websiteOf(agent: { agentId: string; agentSecret: string }, name: string): Promise<Party> {
  return { ...(await server.createClient({ name })), agentId: agent.agentId, agentSecret: agent.agentSecret };
}

const refresh = (party: Party, refreshToken: string) =>
  postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });

const introspect = async (party: Party, token: string) =>
  (await (
    await postForm(server, '/introspect', { token, client_id: party.clientId, client_secret: party.clientSecret })
  ).json()) as { active: boolean; scope?: string };

const userinfo = (accessToken: string) =>
  fetch(new URL('/userinfo', server.baseUrl), { headers: { authorization: `Bearer ${accessToken}` } });

/** What the website can still do with its tokens: refresh, userinfo's email, introspection of both. */
async function whatStillWorks(party: Party, tokens: Tokens) {
  const info = await userinfo(tokens.access_token);
  const body = (await info.json()) as Record<string, unknown>;
  return {
    userinfo: info.status,
    email: body.email ?? null,
    accessActive: (await introspect(party, tokens.access_token)).active,
    refreshActive: (await introspect(party, tokens.refresh_token)).active,
  };
}
const working = { userinfo: 200, email: expect.stringContaining('@'), accessActive: true, refreshActive: true };
const ended = { userinfo: 401, email: null, accessActive: false, refreshActive: false };

/** The refresh is refused as invalid_grant, saying why. */
async function expectRefreshRefused(party: Party, tokens: Tokens, words: RegExp) {
  const answer = await refresh(party, tokens.refresh_token);
  expect(answer.status).toBe(400);
  expect(await answer.json()).toEqual({ error: 'invalid_grant', error_description: expect.stringMatching(words) });
}

const policyAct = async (agentId: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).find(
    (event) => event.action === 'agent.policy' && event.target === agentId,
  )?.detail;

describe('a policy change reaches the grants an agent holds', () => {
  it('credentials expire: the tokens stop at the date, and an extension brings them back', async () => {
    const agent = await ownedAgent();
    const party = await websiteOf(agent, 'Acme Notes');
    const tokens = await obtainTokens(server, party, { scope: 'openid email' });
    const expiry = new Date((server.clock() + 60) * 1000).toISOString().replace('.000Z', 'Z');
    const set = await agent.call('PUT', `/agents/${agent.agentId}/policy`, {
      clients: 'any',
      credentials_expire_at: expiry,
    });
    expect(set.status).toBe(200);
    // Before the date the website carries on.
    expect(await whatStillWorks(party, tokens)).toEqual(working);

    server.clock.advance(61);
    expect(await whatStillWorks(party, tokens)).toEqual(ended);
    await expectRefreshRefused(party, tokens, /credentials have expired/);
    // Nothing was revoked: extending the credentials brings the same tokens back.
    expect(
      (await server.ctx.store.grants.list({ limit: 10, agentId: agent.agentId })).map((g) => g.revoked_at),
    ).toEqual([null]);
    const later = new Date((server.clock() + 3600) * 1000).toISOString().replace('.000Z', 'Z');
    await agent.call('PUT', `/agents/${agent.agentId}/policy`, { clients: 'any', credentials_expire_at: later });
    expect(await whatStillWorks(party, tokens)).toEqual(working);
    expect((await refresh(party, tokens.refresh_token)).status).toBe(200);
  });

  it('a scope ceiling without email revokes the grants that share email, and only those', async () => {
    const agent = await ownedAgent();
    const notes = await websiteOf(agent, 'Acme Notes');
    const travel = await websiteOf(agent, 'Travel Planner');
    const withEmail = await obtainTokens(server, notes, { scope: 'openid email' });
    const withoutEmail = await obtainTokens(server, travel, { scope: 'openid profile' });

    const set = await agent.call('PUT', `/agents/${agent.agentId}/policy`, {
      clients: 'any',
      scope_ceiling: ['openid', 'profile'],
    });
    expect(set.status).toBe(200);

    expect(await whatStillWorks(notes, withEmail)).toEqual(ended);
    await expectRefreshRefused(notes, withEmail, /revoked/);
    // The website within the ceiling keeps its grant.
    expect(await whatStillWorks(travel, withoutEmail)).toEqual({ ...working, email: null });
    expect((await refresh(travel, withoutEmail.refresh_token)).status).toBe(200);
    expect(await policyAct(agent.agentId)).toMatch(
      /Scope ceiling: any → openid profile; revoked grants 1, codes 0, requests 0$/,
    );
  });

  it('only listed websites revokes the grants of the websites left out', async () => {
    const agent = await ownedAgent();
    const notes = await websiteOf(agent, 'Acme Notes');
    const travel = await websiteOf(agent, 'Travel Planner');
    const notesTokens = await obtainTokens(server, notes, { scope: 'openid email' });
    const travelTokens = await obtainTokens(server, travel, { scope: 'openid email' });

    const set = await agent.call('PUT', `/agents/${agent.agentId}/policy`, {
      clients: 'listed',
      allowed_clients: [travel.clientId],
    });
    expect(set.status).toBe(200);

    expect(await whatStillWorks(notes, notesTokens)).toEqual(ended);
    await expectRefreshRefused(notes, notesTokens, /revoked/);
    expect(await whatStillWorks(travel, travelTokens)).toEqual(working);
    expect((await refresh(travel, travelTokens.refresh_token)).status).toBe(200);
  });

  it('"ask" keeps the grants the agent holds: it asks about new websites only', async () => {
    const agent = await ownedAgent();
    const notes = await websiteOf(agent, 'Acme Notes');
    const tokens = await obtainTokens(server, notes, { scope: 'openid email' });
    const set = await agent.call('PUT', `/agents/${agent.agentId}/policy`, { clients: 'ask', allowed_clients: [] });
    expect(set.status).toBe(200);
    expect(await whatStillWorks(notes, tokens)).toEqual(working);
    expect((await refresh(notes, tokens.refresh_token)).status).toBe(200);
  });

  it('announces each website cut off as agent.grants_revoked with reason policy', async () => {
    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const hook = await admin.call('POST', '/webhooks', {
      url: 'https://hooks.example.com/policy',
      events: ['agent.grants_revoked'],
    });
    expect(hook.status).toBe(201);
    const agent = await ownedAgent();
    const notes = await websiteOf(agent, 'Acme Notes');
    await obtainTokens(server, notes, { scope: 'openid email' });
    await agent.call('PUT', `/agents/${agent.agentId}/policy`, { clients: 'listed', allowed_clients: [] });

    const deliveries = await admin.call('GET', `/webhooks/${hook.json.webhook.id}/deliveries`);
    const events = (deliveries.json.data as Array<{ payload: unknown }>).map((delivery) => delivery.payload);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'agent.grants_revoked',
        data: expect.objectContaining({
          agent: expect.objectContaining({ id: agent.agentId }),
          client: { id: notes.clientId, name: 'Acme Notes' },
          reason: 'policy',
        }),
      }),
    );
    await admin.call('DELETE', `/webhooks/${hook.json.webhook.id}`);
  });
});
