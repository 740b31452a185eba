import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { authenticate, obtainTokens, type Party, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** An agent and a website of the account. */
async function partyOf(accountId: string): Promise<Party> {
  return {
    ...(await server.createClient({ accountId, name: 'History Shop' })),
    ...(await server.createAgent({ accountId })),
  };
}

/** A sign-in that fails: the agent gives a wrong secret. */
async function failedSignIn(party: Party) {
  const started = await startFlow(server, party);
  const response = await authenticate(server, { ...party, agentSecret: 'aas_wrong' }, started.requestId);
  expect(response.status).toBe(401);
}

describe('management API: sign-ins', () => {
  it('lists an account’s sign-in attempts newest first, narrowed by outcome, agent, client and time', async () => {
    const { account, call } = await accountWithKey(server);
    const party = await partyOf(account.id);
    const start = server.clock();
    await obtainTokens(server, party);
    server.clock.advance(10);
    await failedSignIn(party);

    const all = await call('GET', '/sign-ins');
    expect(all.status).toBe(200);
    expect(all.json.next_cursor).toBeNull();
    expect(all.json.data.map((s: { outcome: string }) => s.outcome)).toEqual(['invalid_credentials', 'authenticated']);
    expect(all.json.data[1]).toMatchObject({
      agent_id: party.agentId,
      client_id: party.clientId,
      client_name: 'History Shop',
      model: 'test-model',
      at: iso(start),
    });

    const outcomes = async (query: string) => {
      const page = await call('GET', `/sign-ins?${query}`);
      expect(page.status, query).toBe(200);
      return page.json.data.map((s: { outcome: string }) => s.outcome);
    };
    expect(await outcomes('outcome=success')).toEqual(['authenticated']);
    expect(await outcomes('outcome=failure')).toEqual(['invalid_credentials']);
    expect(await outcomes('outcome=invalid_credentials')).toEqual(['invalid_credentials']);
    expect(await outcomes(`client_id=${party.clientId}`)).toEqual(['authenticated']);
    expect(await outcomes(`agent_id=${party.agentId}`)).toEqual(['invalid_credentials', 'authenticated']);
    expect(await outcomes(`since=${iso(start + 1)}`)).toEqual(['invalid_credentials']);
    expect(await outcomes(`until=${iso(start + 1)}`)).toEqual(['authenticated']);
    expect(await outcomes(`since=${iso(start)}&until=${iso(start + 10)}`)).toEqual(['authenticated']);
    expect(await outcomes(`since=${encodeURIComponent(iso(start).replace('Z', '+00:00'))}`)).toHaveLength(2);
  });

  it('answers a bad filter with a 400 that names it', async () => {
    const { call } = await accountWithKey(server);
    for (const [query, named] of [
      ['outcome=maybe', 'outcome'],
      ['since=yesterday', 'since'],
      ['until=2026-13-01', 'until'],
      ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      ['cursor=abc', 'cursor'],
      ['limit=1000', 'limit'],
    ]) {
      const answer = await call('GET', `/sign-ins?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.json.error, query).toBe('invalid_request');
      expect(answer.json.error_description, query).toContain(named);
    }
  });

  it('pages through sign-ins without loss or repeat, several in one second', async () => {
    const { account, call } = await accountWithKey(server);
    const party = await partyOf(account.id);
    for (let i = 0; i < 7; i++) {
      if (i % 3 === 0) server.clock.advance(1);
      await failedSignIn(party);
    }
    const all = (await call('GET', '/sign-ins?limit=100')).json.data.map((s: { id: string }) => s.id);
    expect(all).toHaveLength(7);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call('GET', `/sign-ins?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.json.data.map((s: { id: string }) => s.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });
});

describe('management API: activity', () => {
  it('lists the console’s activity for an admin’s key, narrowed by action, actor and time', async () => {
    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const member = await accountWithKey(server);
    server.clock.advance(100);
    const start = server.clock();
    await member.call('POST', '/agents', { name: 'Watched' });
    server.clock.advance(5);
    await member.call('GET', '/agents');

    const mine = await admin.call('GET', `/activity?actor_id=${member.account.id}`);
    expect(mine.status).toBe(200);
    // A read is recorded as the call; a change as its act, in the console's words, naming the key.
    expect(mine.json.data.map((e: { action: string }) => e.action)).toEqual(['api.listAgents', 'agent.create']);
    expect(mine.json.data[1]).toMatchObject({ actor_email: member.account.email, at: iso(start) });
    expect(mine.json.data[1].detail).toBe(`key ${member.key.id}: Watched`);
    expect(mine.json.data[0].detail).toContain('GET /api/admin/v1/agents → 200');

    const actions = async (query: string) =>
      (await admin.call('GET', `/activity?actor_id=${member.account.id}&${query}`)).json.data.map(
        (e: { action: string }) => e.action,
      );
    expect(await actions('action=agent.create')).toEqual(['agent.create']);
    expect(await actions('action=api.*')).toEqual(['api.listAgents']);
    expect(await actions('action=agent.*')).toEqual(['agent.create']);
    expect(await actions(`since=${iso(start + 1)}`)).toEqual(['api.listAgents']);
    expect(await actions(`until=${iso(start + 1)}`)).toEqual(['agent.create']);

    // The admin's own calls are there too, the newest first (a second later, so no other event shares its time).
    server.clock.advance(1);
    await admin.call('GET', '/agents');
    const latest = await admin.call('GET', '/activity?limit=1');
    expect(latest.json.data[0]).toMatchObject({ action: 'api.listAgents', actor_id: admin.account.id });

    const bad = await admin.call('GET', '/activity?action=drop%20table');
    expect(bad.status).toBe(400);
    expect(bad.json.error_description).toContain('action');
  });

  it('pages through the activity without loss or repeat', async () => {
    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const member = await accountWithKey(server);
    for (let i = 0; i < 6; i++) {
      if (i % 4 === 0) server.clock.advance(1);
      await member.call('GET', '/agents');
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await admin.call(
        'GET',
        `/activity?actor_id=${member.account.id}&limit=4${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.json.data.map((e: { id: string }) => e.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
  });
});
