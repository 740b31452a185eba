/**
 * Who reads what of a sign-in (issue 35, docs/design.md §11): a website's owner is shown what the
 * protocol tells the website of another owner's agent (when, how it ended, the `sub` of a
 * sign-in), never the agent's model, address or user agent, and nothing of an attempt that
 * changed nothing the website sees (a wrong secret, the agent's own policy refusing it, a hold
 * for approval): the console's website page, its filter and CSV, and the management API's
 * /sign-ins alike. The agent's owner and admins read every attempt whole. Real flows over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { decideApproval } from '../../src/domain/approvals.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { operator } from '../../src/management/actor.ts';
import { createApiKey } from '../../src/management/api-keys.ts';
import { accountWithKey, caller } from '../helpers/api.ts';
import { type ConsoleSession, createPasswordAccount, signIn } from '../helpers/console.ts';
import { postJson, startFlow } from '../helpers/flow.ts';
import { createOwnedAgent, createOwnedClient } from '../helpers/owned.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let agentOwner: AccountRecord;
let websiteOwner: AccountRecord;
let agentSession: ConsoleSession;
let websiteSession: ConsoleSession;
let adminSession: ConsoleSession;
let website: { id: string; redirectUri: string };
/** The agents of agentOwner: one its policy refuses at the website, one that signs in, one its owner denies. */
const agents: Record<'refused' | 'signer' | 'denied', { id: string; secret: string }> = {} as never;

/** Every marker an agent's details carry: what a website's owner must never read. */
const MODELS = ['model-refused', 'model-wrong-secret', 'model-signed-in', 'model-denied'];
const USER_AGENTS = ['ua-refused/1.0', 'ua-wrong-secret/1.0', 'ua-signed-in/1.0', 'ua-denied/1.0'];

/** An attempt of `agent` at the website, with its model and User-Agent as markers. */
async function attempt(agent: { id: string; secret: string }, marker: number, secret = agent.secret) {
  const started = await startFlow(
    server,
    {
      clientId: website.id,
      clientSecret: '',
      redirectUri: website.redirectUri,
      agentId: agent.id,
      agentSecret: secret,
    },
    { scope: 'openid' },
  );
  const response = await postJson(
    server,
    '/api/agent/authenticate',
    { request_id: started.requestId, agent_id: agent.id, agent_secret: secret, model: MODELS[marker] },
    { 'user-agent': USER_AGENTS[marker]! },
  );
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

beforeAll(async () => {
  server = await startTestServer();
  const { ctx } = server;
  agentOwner = await createPasswordAccount(ctx, { email: 'agents@example.org' });
  websiteOwner = await createPasswordAccount(ctx, { email: 'shop@example.org' });
  const admin = await createPasswordAccount(ctx, { email: 'admin@example.org', role: 'admin' });
  const made = await createOwnedClient(ctx, websiteOwner, { name: 'Shop', redirect_uris: 'https://shop.example/cb' });
  website = { id: made.client.id, redirectUri: 'https://shop.example/cb' };
  for (const name of ['refused', 'signer', 'denied'] as const) {
    const { agent, secret } = await createOwnedAgent(ctx, agentOwner, `Agent ${name}`);
    agents[name] = { id: agent.id, secret };
  }
  await setAgentPolicy(ctx, agents.refused.id, { ...DEFAULT_POLICY, websites: 'listed' });
  await setAgentPolicy(ctx, agents.denied.id, { ...DEFAULT_POLICY, websites: 'ask' });

  // The agent's own policy refuses the website: nothing changes for the website.
  expect((await attempt(agents.refused, 0)).status).toBe(403);
  server.clock.advance(1);
  // A wrong secret: nothing changes for the website either.
  expect((await attempt(agents.signer, 1, 'aas_wrong')).status).toBe(401);
  server.clock.advance(1);
  // A sign-in: the website is given the agent's id as the sub.
  expect((await attempt(agents.signer, 2)).status).toBe(200);
  server.clock.advance(1);
  // Held for the owner, who denies it: the website's request ends in access_denied.
  const held = await attempt(agents.denied, 3);
  expect(held.status).toBe(202);
  await decideApproval(ctx, held.body.approval_id!, 'deny', agentOwner.id);

  agentSession = await signIn(server.baseUrl, agentOwner.email);
  websiteSession = await signIn(server.baseUrl, websiteOwner.email);
  adminSession = await signIn(server.baseUrl, admin.email);
});
afterAll(() => server.close());

const websitePath = () => `/console/websites/${website.id}`;
/** The history rows of a page, by their cells' text. */
const historyRows = (text: string) =>
  [...text.matchAll(/<tr data-event="[^"]+">([\s\S]*?)<\/tr>/g)].map((match) => match[1]!.replace(/<[^>]+>/g, ' '));

function expectNoAgentDetails(text: string) {
  for (const marker of [...MODELS, ...USER_AGENTS]) expect(text).not.toContain(marker);
  for (const name of ['refused', 'denied'] as const) expect(text).not.toContain(agents[name].id);
}

describe("a website's owner reads another owner's agents as the website is told", () => {
  it('the console: the sign-in with its sub, the denial without its agent; no refusal, model, address or user agent', async () => {
    const page = await websiteSession.get(websitePath());
    expect(page.status).toBe(200);
    const rows = historyRows(page.text);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('Denied by its owner');
    expect(rows[0]).toContain('not shown');
    expect(rows[1]).toContain('Signed in');
    expect(rows[1]).toContain(agents.signer.id);
    for (const row of rows)
      for (const outcome of ['Refused by its owner', 'Wrong secret']) expect(row).not.toContain(outcome);
    expect(page.text).toContain('id="history-others"');
    expectNoAgentDetails(page.text);
    // The agent filter offers only the sub the website was given, and refuses the others.
    expect(page.text).toContain(`<option value="${agents.signer.id}"`);
    for (const name of ['refused', 'denied'] as const) {
      const refused = await websiteSession.get(`${websitePath()}?agent=${agents[name].id}`);
      expect(refused.status, name).toBe(400);
      expect(refused.text, name).toContain('Choose an agent from the list.');
      expectNoAgentDetails(refused.text);
    }
  });

  it('the CSV export: the same rows, the agent’s cells empty', async () => {
    const csv = await websiteSession.get(`${websitePath()}/history.csv`);
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('"approval_denied"');
    expect(lines[2]).toContain(`"${agents.signer.id}"`);
    expect(lines[2]).toContain('"authenticated"');
    expect(csv.text).not.toContain('127.0.0.1');
    expectNoAgentDetails(csv.text);
  });

  it('the management API: seen_as website, agent_id only as the sub, no details; no other attempt, by any filter', async () => {
    // A read key of the website's owner, and one of an account with nothing of its own.
    const { secret } = await createApiKey(server.ctx, operator(), {
      accountEmail: websiteOwner.email,
      name: 'shop script',
      access: 'read',
      reach: 'own',
    });
    const api = caller(server, secret);
    const stranger = await accountWithKey(server);
    const all = await api('GET', '/sign-ins');
    expect(all.status).toBe(200);
    expect(all.json.data).toEqual([
      expect.objectContaining({
        outcome: 'approval_denied',
        seen_as: 'website',
        agent_id: null,
        client_id: website.id,
        model: null,
        ip: null,
        user_agent: null,
      }),
      expect.objectContaining({
        outcome: 'authenticated',
        seen_as: 'website',
        agent_id: agents.signer.id,
        model: null,
        ip: null,
        user_agent: null,
      }),
    ]);
    expectNoAgentDetails(all.text);
    for (const query of [
      `agent_id=${agents.refused.id}`,
      `agent_id=${agents.denied.id}`,
      'outcome=access_denied',
      'outcome=invalid_credentials',
      `client_id=${website.id}&outcome=failure`,
    ]) {
      const page = await api('GET', `/sign-ins?${query}`);
      expect(page.status, query).toBe(200);
      expectNoAgentDetails(page.text);
      expect(
        page.json.data.every((row: { outcome: string }) => ['approval_denied', 'authenticated'].includes(row.outcome)),
        query,
      ).toBe(true);
    }
    expect((await api('GET', `/sign-ins?agent_id=${agents.denied.id}`)).json.data).toEqual([]);
    // Unrelated accounts read nothing of it.
    expect((await stranger.call('GET', '/sign-ins')).json.data).toEqual([]);
  });
});

describe("the agent's owner and admins read every attempt whole", () => {
  it("the refusal by the agent's policy is in the agent's history, with its model and user agent", async () => {
    const page = await agentSession.get(`/console/agents/${agents.refused.id}`);
    const rows = historyRows(page.text);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('Refused by its owner');
    expect(rows[0]).toContain('model-refused');
    expect(page.text).toContain('ua-refused/1.0');
    expect(page.text).not.toContain('id="history-others"');
  });

  it('an admin reads the website’s every attempt, with the agents’ details', async () => {
    const page = await adminSession.get(websitePath());
    // Refused, held for approval, denied, signed in; a wrong secret names no request's website (the
    // agent was not proven), so it is in no website's history.
    const rows = historyRows(page.text);
    expect(rows).toHaveLength(4);
    expect(rows.some((row) => row.includes('Asked for its owner'))).toBe(true);
    for (const marker of ['model-refused', 'model-signed-in', 'model-denied']) expect(page.text).toContain(marker);
    expect(page.text).not.toContain('id="history-others"');
  });
});
