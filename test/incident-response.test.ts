/**
 * Incident response (docs/design.md §7, SECURITY.md): after a leak, the owner ends everything the
 * stolen credentials obtained, with the CLI, on either engine.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAgentStatus } from '../src/domain/agents.ts';
import {
  authenticate,
  checkStatus,
  obtainCode,
  obtainTokens,
  type Party,
  postForm,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';

const run = promisify(execFile);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `./bin/agentauth …` on the test server's database, as an operator runs it. */
async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const env = {
    ...process.env,
    DATABASE_URL: server.databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    BASE_URL: undefined,
    NODE_ENV: undefined,
  } as NodeJS.ProcessEnv;
  const { stdout } = await run('./bin/agentauth', [...args, '--json'], { env });
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function introspect(party: Party, token: string): Promise<boolean> {
  const response = await postForm(server, '/introspect', {
    token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });
  return ((await response.json()) as { active: boolean }).active;
}

const refresh = (party: Party, tokens: Tokens) =>
  postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });

describe('revoking the grants of a leaked agent', () => {
  it("disable and enable again brings a thief's tokens back; revoke-grants ends them for good", async () => {
    const party = await setupParty(server);
    const stolen = await obtainTokens(server, party);
    await setAgentStatus(server.ctx, party.agentId, 'disabled');
    expect(await introspect(party, stolen.access_token)).toBe(false);
    await setAgentStatus(server.ctx, party.agentId, 'active');
    expect(await introspect(party, stolen.access_token)).toBe(true);

    const unredeemed = await obtainCode(server, party);
    const inProgress = await startFlow(server, party);
    expect((await authenticate(server, party, inProgress.requestId)).status).toBe(200);
    const other = await setupParty(server);
    const bystander = await obtainTokens(server, other);

    const output = await cli('agent', 'revoke-grants', party.agentId);
    expect(output).toEqual({ agent_id: party.agentId, revoked: { grants: 1, codes: 1, requests: 1 } });

    expect(await introspect(party, stolen.access_token)).toBe(false);
    expect(await introspect(party, stolen.refresh_token)).toBe(false);
    expect(
      (
        await fetch(new URL('/userinfo', server.baseUrl), {
          headers: { authorization: `Bearer ${stolen.access_token}` },
        })
      ).status,
    ).toBe(401);
    expect((await refresh(party, stolen)).status).toBe(400);
    expect((await redeem(server, party, unredeemed.code, unredeemed.verifier)).status).toBe(400);
    expect((await checkStatus(server, inProgress.requestId)).body).toMatchObject({
      status: 'error',
      error: 'access_denied',
    });
    // Other agents' grants are untouched, and the agent itself can sign in again.
    expect(await introspect(other, bystander.access_token)).toBe(true);
    const fresh = await obtainTokens(server, party);
    expect(await introspect(party, fresh.access_token)).toBe(true);
  });

  it('rotate-secret --revoke-grants rotates the secret and revokes in one step', async () => {
    const party = await setupParty(server);
    const stolen = await obtainTokens(server, party);
    const output = await cli('agent', 'rotate-secret', party.agentId, '--revoke-grants');
    expect(output).toMatchObject({
      agent_id: party.agentId,
      agent_secret: expect.stringMatching(/^aas_/),
      previous_secret_valid_for: 0,
      revoked: { grants: 1 },
    });
    expect(await introspect(party, stolen.access_token)).toBe(false);
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(401);
    expect(
      (await authenticate(server, { ...party, agentSecret: output.agent_secret as string }, started.requestId)).status,
    ).toBe(200);
  });

  it('client revoke-grants ends every token of that client only', async () => {
    const party = await setupParty(server);
    const other = await setupParty(server);
    const leaked = await obtainTokens(server, party);
    const kept = await obtainTokens(server, other);
    expect(await cli('client', 'revoke-grants', party.clientId)).toEqual({
      client_id: party.clientId,
      revoked: { grants: 1, codes: 0, requests: 0 },
    });
    expect(await introspect(party, leaked.access_token)).toBe(false);
    expect((await refresh(party, leaked)).status).toBe(400);
    expect(await introspect(other, kept.access_token)).toBe(true);
  });

  it('an unknown id is an error naming it, exit 1', async () => {
    await expect(cli('agent', 'revoke-grants', 'agt_nobody')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no agent agt_nobody'),
    });
  });
});
