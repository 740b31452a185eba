/**
 * CIBA's ping mode (OpenID CIBA Core 1.0 §10.2; docs/design.md §21) to a real HTTPS receiver on
 * loopback: once the owner decides, the policy answers or the request expires, the website's
 * notification endpoint gets one POST with `Authorization: Bearer {client_notification_token}`
 * and `{"auth_req_id": …}`, through the webhooks' outbound guard; it then polls /token once. The
 * token is stored sealed, never in clear; a ping client must send one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/crypto.ts';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { bcAuthorize, cibaPoll, PAY_ACME, PAYMENT, type Site } from '../helpers/action-requests.ts';
import { type ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { obtainTokens } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

let server: TestServer;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let owner: AccountRecord;
let session: ConsoleSession;
let website: Site & { redirectUri: string };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    env: { ACTION_APPROVALS: 'true' },
    webhooks: { fetch: { ca: receiver.ca, allowAddress: allowLoopback }, pollMs: 100 },
  });
  owner = await createPasswordAccount(server.ctx, { email: 'grace@example.org', name: 'Grace' });
  session = await signIn(server.baseUrl, owner.email);
  website = await server.createClient({ name: 'Ping Shop', redirectUris: ['https://shop.example/callback'] });
  await server.ctx.store.clients.update(website.clientId, {
    action_types: [PAYMENT],
    backchannel_token_delivery_mode: 'ping',
    backchannel_client_notification_endpoint: receiver.url,
  });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function signedInAgent(name: string) {
  const { agent, secret } = await createOwnedAgent(server.ctx, owner, name);
  await obtainTokens(server, { ...website, agentId: agent.id, agentSecret: secret }, { scope: 'openid' });
  return agent.id;
}

const ask = (agentId: string, extra: Record<string, string | undefined> = {}) =>
  bcAuthorize(server.baseUrl, website, {
    scope: 'openid',
    login_hint: agentId,
    authorization_details: JSON.stringify(PAY_ACME),
    ...extra,
  });

/** The pings received for one auth_req_id. */
const pingsOf = (authReqId: string) => receiver.received.filter((each) => each.payload.auth_req_id === authReqId);

describe('ping mode', () => {
  it('the owner approves: one ping with the bearer token, then the poll gets the tokens', async () => {
    const agentId = await signedInAgent('Ping agent');
    const token = 'notify-me-8f3a2c';
    const asked = (await (await ask(agentId, { client_notification_token: token })).json()) as { auth_req_id: string };
    const stored = JSON.stringify(await server.ctx.store.actionRequests.findByDigest(digest(asked.auth_req_id)));
    // Sealed: neither the token nor the auth_req_id is readable in the database.
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(asked.auth_req_id);

    const waiting = await server.ctx.store.approvals.list({
      accountId: owner.id,
      status: 'pending',
      now: server.clock(),
      limit: 10,
    });
    const approval = waiting.find((each) => each.agent_id === agentId)!;
    expect(pingsOf(asked.auth_req_id)).toHaveLength(0);
    await session.get(`/console/approvals/${approval.id}`);
    expect(
      (await session.post(`/console/approvals/${approval.id}/decide`, { decision: 'once', password: TEST_PASSWORD }))
        .status,
    ).toBe(303);

    const [ping] = await receiver.until((all) => all.some((each) => each.payload.auth_req_id === asked.auth_req_id));
    const received = pingsOf(asked.auth_req_id);
    expect(received).toHaveLength(1);
    expect(received[0]!.headers.authorization).toBe(`Bearer ${token}`);
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(received[0]!.payload).toEqual({ auth_req_id: asked.auth_req_id });
    expect(ping).toBeDefined();

    const tokens = await cibaPoll(server.baseUrl, website, asked.auth_req_id);
    expect(tokens.status).toBe(200);
    expect(await tokens.json()).toMatchObject({ authorization_details: PAY_ACME });
    // Once per decision: no second ping comes.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(pingsOf(asked.auth_req_id)).toHaveLength(1);
  });

  it("the policy's denial and an expiry are pinged too; the poll then says so", async () => {
    const agentId = await signedInAgent('Refused agent');
    await setAgentPolicy(server.ctx, agentId, {
      ...DEFAULT_POLICY,
      actions: [{ client_id: website.clientId, answer: 'never' }],
    });
    const refused = (await (await ask(agentId, { client_notification_token: 'tok-refused' })).json()) as {
      auth_req_id: string;
    };
    await receiver.until((all) => all.some((each) => each.payload.auth_req_id === refused.auth_req_id));
    expect(await (await cibaPoll(server.baseUrl, website, refused.auth_req_id)).json()).toMatchObject({
      error: 'access_denied',
    });

    const waiting = await signedInAgent('Slow owner agent');
    const expiring = (await (
      await ask(waiting, { client_notification_token: 'tok-expiry', requested_expiry: '30' })
    ).json()) as {
      auth_req_id: string;
    };
    server.clock.advance(31);
    await receiver.until((all) => all.some((each) => each.payload.auth_req_id === expiring.auth_req_id));
    expect(pingsOf(expiring.auth_req_id)).toHaveLength(1);
    expect(await (await cibaPoll(server.baseUrl, website, expiring.auth_req_id)).json()).toMatchObject({
      error: 'expired_token',
    });
  });

  it('a ping client must send a client_notification_token (invalid_request)', async () => {
    const agentId = await signedInAgent('Tokenless agent');
    const response = await ask(agentId);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    const tooLong = await ask(agentId, { client_notification_token: 'x'.repeat(1025) });
    expect(await tooLong.json()).toMatchObject({ error: 'invalid_request' });
  });
});
