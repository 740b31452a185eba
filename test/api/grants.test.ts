import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { obtainTokens, type Party, postForm } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** An agent and a website of the account, and a sign-in of one at the other. */
async function signedInParty(accountId: string, client: { accountId?: string } = { accountId }) {
  const party: Party = { ...(await server.createClient(client)), ...(await server.createAgent({ accountId })) };
  const tokens = await obtainTokens(server, party);
  return { party, tokens };
}

const userinfo = (token: string) =>
  fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } });

describe('management API: grants', () => {
  it('lists, reads and revokes a grant: its tokens stop working', async () => {
    const { account, call } = await accountWithKey(server);
    const { party, tokens } = await signedInParty(account.id);
    const list = await call('GET', '/grants');
    expect(list.status).toBe(200);
    expect(list.json.next_cursor).toBeNull();
    expect(list.json.data).toHaveLength(1);
    const grant = list.json.data[0];
    expect(grant).toMatchObject({
      agent_id: party.agentId,
      client_id: party.clientId,
      model: 'test-model',
      resource: null,
      revoked_at: null,
    });
    expect(grant.scope).toContain('openid');

    const read = await call('GET', `/grants/${grant.id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(grant);
    expect((await userinfo(tokens.access_token)).status).toBe(200);

    const revoked = await call('POST', `/grants/${grant.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.id).toBe(grant.id);
    expect(revoked.json.revoked_at).not.toBeNull();
    expect((await server.ctx.store.grants.find(grant.id))?.revoked_at).not.toBeNull();
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    const refresh = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(refresh.status).toBe(400);

    // Revoking again changes nothing.
    server.clock.advance(5);
    const again = await call('POST', `/grants/${grant.id}/revoke`);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(revoked.json);

    expect((await call('GET', '/grants/grt_nothing')).status).toBe(404);
    expect((await call('POST', '/grants/grt_nothing/revoke')).status).toBe(404);
  });

  it('narrows the list by agent, client and whether grants are live, with a 400 for a bad value', async () => {
    const { account, call } = await accountWithKey(server);
    const first = await signedInParty(account.id);
    server.clock.advance(1);
    const second = await signedInParty(account.id);
    const ids = async (query: string) => {
      const page = await call('GET', `/grants${query}`);
      expect(page.status).toBe(200);
      return page.json.data.map((g: { agent_id: string }) => g.agent_id);
    };
    expect(await ids('')).toEqual([first.party.agentId, second.party.agentId]);
    expect(await ids(`?agent_id=${second.party.agentId}`)).toEqual([second.party.agentId]);
    expect(await ids(`?client_id=${first.party.clientId}`)).toEqual([first.party.agentId]);
    await call('POST', `/agents/${first.party.agentId}/revoke-grants`);
    expect(await ids('?live=true')).toEqual([second.party.agentId]);
    expect(await ids('?live=false')).toEqual([first.party.agentId]);
    const bad = await call('GET', '/grants?live=yes');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('invalid_request');
    expect(bad.json.error_description).toBe('live must be one of true, false');
  });

  it('reaches a grant from either side: the agent’s owner and the website’s owner', async () => {
    const agentOwner = await accountWithKey(server);
    const siteOwner = await accountWithKey(server);
    const stranger = await accountWithKey(server);
    const { party } = await signedInParty(agentOwner.account.id, { accountId: siteOwner.account.id });
    const [grant] = (await agentOwner.call('GET', '/grants')).json.data;
    expect(grant.client_id).toBe(party.clientId);
    expect((await siteOwner.call('GET', `/grants/${grant.id}`)).status).toBe(200);
    expect((await siteOwner.call('GET', '/grants')).json.data.map((g: { id: string }) => g.id)).toEqual([grant.id]);
    expect((await stranger.call('GET', `/grants/${grant.id}`)).status).toBe(404);
    expect((await stranger.call('POST', `/grants/${grant.id}/revoke`)).status).toBe(404);
    expect((await stranger.call('GET', `/grants?agent_id=${party.agentId}`)).json.data).toEqual([]);
    expect((await server.ctx.store.grants.find(grant.id))?.revoked_at).toBeNull();
  });

  it('pages through grants without loss or repeat', async () => {
    const { account, call } = await accountWithKey(server);
    const party: Party = {
      ...(await server.createClient({ accountId: account.id })),
      ...(await server.createAgent({ accountId: account.id })),
    };
    for (let i = 0; i < 5; i++) {
      if (i % 2 === 0) server.clock.advance(1);
      await obtainTokens(server, party);
    }
    const all = (await call('GET', '/grants?limit=100')).json.data.map((g: { id: string }) => g.id);
    expect(all).toHaveLength(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call('GET', `/grants?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.json.data.map((g: { id: string }) => g.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });
});
