/**
 * An agent the operator makes at the command line for someone who has a console account
 * (issue 38, item 5): it is that account's agent, listed on their console's agents page with
 * the account's claims, whichever case the email was typed in; an email without an account
 * still makes an agent of someone without one.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `agentauth agent create … --json` beside the server, as the operator runs it. */
async function createAtCli(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run('./bin/agentauth', ['agent', 'create', ...args, '--json'], {
    env: {
      ...process.env,
      DATABASE_URL: server.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      BASE_URL: undefined,
      NODE_ENV: undefined,
    } as NodeJS.ProcessEnv,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('agent create --owner-email at the command line', () => {
  it("makes an existing console account's agent: on its agents page, with its claims", async () => {
    const ada = await createPasswordAccount(server.ctx, { email: 'Ada.Lovelace@Example.org', name: 'Ada Lovelace' });
    const made = await createAtCli('--owner-email', 'ada.lovelace@example.ORG', '--owner-name', 'Someone Else');
    // The account's claims, not what was typed: the agent is the account's.
    expect(made).toMatchObject({
      owner_email: 'Ada.Lovelace@Example.org',
      owner_name: 'Ada Lovelace',
      name: 'Ada Lovelace',
    });
    const agentId = made.agent_id as string;
    expect((await server.ctx.store.agents.find(agentId))?.account_id).toBe(ada.id);

    const session = await signIn(server.baseUrl, ada.email);
    const page = await session.get('/console/agents');
    expect(page.status).toBe(200);
    expect(page.text).toContain(agentId);
    const detail = await session.get(`/console/agents/${agentId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Ada Lovelace');
  });

  it('still makes an agent of someone without a console account when no account has the email', async () => {
    const made = await createAtCli('--owner-email', 'nobody.here@example.org', '--name', 'Loose agent');
    expect(made).toMatchObject({ owner_email: 'nobody.here@example.org', name: 'Loose agent' });
    expect((await server.ctx.store.agents.find(made.agent_id as string))?.account_id).toBeNull();
  });
});
