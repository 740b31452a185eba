/**
 * The console's live approvals across nodes (docs/design.md §16): a console stream open on one
 * node hears an approval asked on another, through PostgreSQL's LISTEN/NOTIFY on the status
 * channel (SQLite is one node by design, so this suite is PostgreSQL's only; vitest.config.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent } from './helpers/owned.ts';

import { DEFAULT_POLICY, setAgentPolicy } from '../src/domain/agent-policy.ts';
import { createPasswordAccount, signIn } from './helpers/console.ts';
import { EventReader } from './helpers/events.ts';
import { authenticate, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let first: TestServer;
let second: TestServer;

beforeAll(async () => {
  first = await startTestServer();
  second = await startTestServer({ databaseUrl: first.databaseUrl });
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

describe('approvals live on several nodes', () => {
  it('a console stream on one node counts an approval asked on another, and its decision there', async () => {
    const account = await createPasswordAccount(first.ctx);
    const person = await signIn(first.baseUrl, account.email);
    const cookie = [...person.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${first.baseUrl}/console/approvals/events`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const reader = new EventReader(response);
    const count = async () => (JSON.parse((await reader.next())!.data) as { pending: number }).pending;
    try {
      expect(await count()).toBe(0);
      const website = await second.createClient({ name: 'Acme Notes' });
      const { agent, secret } = await createOwnedAgent(second.ctx, account, 'Research assistant');
      await setAgentPolicy(second.ctx, agent.id, { ...DEFAULT_POLICY, websites: 'ask' });
      const party = { ...website, agentId: agent.id, agentSecret: secret };
      const started = await startFlow(second, party);
      const asked = await authenticate(second, party, started.requestId);
      expect(asked.status).toBe(202);
      expect(await count()).toBe(1);

      // Decided on the second node (its console, the same session): the first node's stream hears it.
      const there = await signIn(second.baseUrl, account.email);
      const { approval_id: approvalId } = (await asked.json()) as { approval_id: string };
      await there.get(`/console/approvals/${approvalId}`);
      const decided = await there.post(`/console/approvals/${approvalId}/decide`, {
        decision: 'deny',
        password: 'correct horse battery staple',
      });
      expect(decided.status).toBe(303);
      expect(await count()).toBe(0);
    } finally {
      await reader.close();
    }
  });
});
