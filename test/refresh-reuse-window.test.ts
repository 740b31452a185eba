/**
 * Concurrent refresh (docs/design.md §6, REFRESH_TOKEN_REUSE_WINDOW), over real HTTP: MCP hosts
 * such as Claude Code refresh one shared credential from several processes at once. Within the
 * window a rotated refresh token presented again by its client answers the same successor pair,
 * so every process converges on one token and the grant lives; after the window, from another
 * client, or once the successor was itself rotated, it is reuse: the grant is revoked, and that
 * is announced (sign-in history, agent.grants_revoked). The database holds the successor only
 * sealed under the server secret and the rotated token, and forgets it after the window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { digest } from '../src/crypto.ts';
import { purgeOnce } from '../src/server.ts';
import { accountWithKey } from './helpers/api.ts';
import { obtainTokens, type Party, postForm, setupParty, type Tokens } from './helpers/flow.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

const WINDOW = 30;
let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { REFRESH_TOKEN_REUSE_WINDOW: String(WINDOW) } });
  party = await setupParty(server);
});
afterAll(() => server.close());

function refresh(refreshToken: string, who: Party = party) {
  return postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: who.clientId,
    client_secret: who.clientSecret,
  });
}

const active = async (token: string) =>
  (
    (await (
      await postForm(server, '/introspect', { token, client_id: party.clientId, client_secret: party.clientSecret })
    ).json()) as { active: boolean }
  ).active;

async function expectReuse(response: Response) {
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
}

describe('REFRESH_TOKEN_REUSE_WINDOW', () => {
  it('20 concurrent refreshes of one token all answer 200 with one successor pair; the grant lives', async () => {
    const first = await obtainTokens(server, party);
    const responses = await Promise.all(Array.from({ length: 20 }, () => refresh(first.refresh_token)));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    const pairs = (await Promise.all(responses.map((response) => response.json()))) as Tokens[];
    expect(new Set(pairs.map((pair) => pair.refresh_token)).size).toBe(1);
    expect(new Set(pairs.map((pair) => pair.access_token)).size).toBe(1);
    expect(pairs[0]!.refresh_token).not.toBe(first.refresh_token);
    expect(await active(pairs[0]!.access_token)).toBe(true);
    // The successor works, and so does its successor: one chain, no sibling families.
    const next = await refresh(pairs[0]!.refresh_token);
    expect(next.status).toBe(200);
    expect(await active(((await next.json()) as Tokens).access_token)).toBe(true);
  });

  it('answers the same pair later in the window, with expires_in what remains', async () => {
    const first = await obtainTokens(server, party);
    const successor = (await (await refresh(first.refresh_token)).json()) as Tokens;
    server.clock.advance(WINDOW - 1);
    try {
      const again = await refresh(first.refresh_token);
      expect(again.status).toBe(200);
      expect(again.headers.get('cache-control')).toBe('no-store');
      const pair = (await again.json()) as Tokens;
      expect(pair.refresh_token).toBe(successor.refresh_token);
      expect(pair.access_token).toBe(successor.access_token);
      expect(pair.expires_in).toBe(successor.expires_in - (WINDOW - 1));
    } finally {
      server.clock.advance(-(WINDOW - 1));
    }
  });

  it('after the window, reuse revokes the grant and is announced in the history and by webhook', async () => {
    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const hook = await admin.call('POST', '/webhooks', {
      url: 'https://hooks.example.com/reuse',
      events: ['agent.grants_revoked'],
    });
    expect(hook.status).toBe(201);
    const first = await obtainTokens(server, party);
    const successor = (await (await refresh(first.refresh_token)).json()) as Tokens;
    server.clock.advance(WINDOW);
    try {
      await expectReuse(await refresh(first.refresh_token));
      expect(await active(successor.access_token)).toBe(false);
      await expectReuse(await refresh(successor.refresh_token));

      const deliveries = await admin.call('GET', `/webhooks/${hook.json.webhook.id}/deliveries`);
      const events = (deliveries.json.data as Array<{ payload: unknown }>).map((delivery) => delivery.payload);
      expect(events).toContainEqual(
        expect.objectContaining({
          type: 'agent.grants_revoked',
          data: expect.objectContaining({
            agent: expect.objectContaining({ id: party.agentId }),
            client: { id: party.clientId, name: 'Test App' },
            reason: 'refresh_token_reuse',
          }),
        }),
      );
      const history = await admin.call('GET', `/sign-ins?agent_id=${party.agentId}&outcome=refresh_token_reused`);
      expect(history.status).toBe(200);
      expect(history.json.data).toContainEqual(
        expect.objectContaining({
          agent_id: party.agentId,
          client_id: party.clientId,
          outcome: 'refresh_token_reused',
        }),
      );
    } finally {
      server.clock.advance(-WINDOW);
      await admin.call('DELETE', `/webhooks/${hook.json.webhook.id}`);
    }
  });

  it('a rotated token presented by another client is refused and revokes nothing, as without the window', async () => {
    const first = await obtainTokens(server, party);
    const successor = (await (await refresh(first.refresh_token)).json()) as Tokens;
    const other = { ...party, ...(await server.createClient()) };
    await expectJsonError(await refresh(first.refresh_token, other), 400, 'invalid_grant');
    expect(await active(successor.access_token)).toBe(true);
    // Its own client, within the window, still converges on the one pair.
    expect(((await (await refresh(first.refresh_token)).json()) as Tokens).refresh_token).toBe(successor.refresh_token);
  });

  it('once the successor was itself rotated, the old token is reuse: the chain is not followed', async () => {
    const first = await obtainTokens(server, party);
    const second = (await (await refresh(first.refresh_token)).json()) as Tokens;
    const third = (await (await refresh(second.refresh_token)).json()) as Tokens;
    await expectReuse(await refresh(first.refresh_token));
    expect(await active(third.access_token)).toBe(false);
  });

  it('stores no usable successor: sealed under the server secret and the old token, forgotten after the window', async () => {
    const first = await obtainTokens(server, party);
    const successor = (await (await refresh(first.refresh_token)).json()) as Tokens;
    const row = (await server.ctx.store.refreshTokens.find(digest(first.refresh_token))) as unknown as Record<
      string,
      unknown
    >;
    const stored = JSON.stringify(row);
    expect(row.successor).toEqual(expect.stringMatching(/^v1\./));
    expect(row.successor_digest).toBe(digest(successor.refresh_token));
    for (const secret of [successor.refresh_token, successor.access_token, first.refresh_token])
      expect(stored).not.toContain(secret);
    // The server secret alone does not open it: the key is derived from the old token too.
    expect(server.ctx.secrets.successors.open(successor.refresh_token, String(row.successor))).toBeNull();
    expect(() => server.ctx.secrets.box.openOnce(String(row.successor))).toThrow();

    server.clock.advance(WINDOW + 1);
    try {
      await purgeOnce(server.ctx);
      const purged = (await server.ctx.store.refreshTokens.find(digest(first.refresh_token))) as unknown as Record<
        string,
        unknown
      >;
      expect(purged.successor).toBeNull();
      expect(purged.successor_digest).toBeNull();
    } finally {
      server.clock.advance(-(WINDOW + 1));
    }
  });
});

describe('the default of REFRESH_TOKEN_REUSE_WINDOW', () => {
  const base = { BASE_URL: 'http://127.0.0.1:1', JWT_SECRET: TEST_JWT_SECRET, DATABASE_URL: 'sqlite::memory:' };

  it('is 0 (the strict rule) unless MCP_AUTHORIZATION turns the MCP features on, then 30 s', () => {
    expect(loadConfig(base).refreshTokenReuseWindow).toBe(0);
    expect(loadConfig({ ...base, MCP_AUTHORIZATION: 'true' }).refreshTokenReuseWindow).toBe(30);
    expect(
      loadConfig({ ...base, MCP_AUTHORIZATION: 'true', REFRESH_TOKEN_REUSE_WINDOW: '0' }).refreshTokenReuseWindow,
    ).toBe(0);
    expect(() => loadConfig({ ...base, REFRESH_TOKEN_REUSE_WINDOW: '301' })).toThrow(/REFRESH_TOKEN_REUSE_WINDOW/);
  });

  it('0 keeps the strict rule over HTTP: a second presentation revokes the grant', async () => {
    const strict = await startTestServer({ env: { REFRESH_TOKEN_REUSE_WINDOW: '0' } });
    try {
      const who = await setupParty(strict);
      const form = (token: string) =>
        postForm(strict, '/token', {
          grant_type: 'refresh_token',
          refresh_token: token,
          client_id: who.clientId,
          client_secret: who.clientSecret,
        });
      const first = await obtainTokens(strict, who);
      const second = (await (await form(first.refresh_token)).json()) as Tokens;
      await expectReuse(await form(first.refresh_token));
      await expectReuse(await form(second.refresh_token));
    } finally {
      await strict.close();
    }
  });
});
