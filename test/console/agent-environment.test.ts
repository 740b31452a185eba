/**
 * What the console shows for an agent's environment works when pasted (issue 21): the block on
 * the page of a new agent, and the one after a rotation, are copied as a person would, given to
 * `agentauth sign-in` as its whole environment, and it signs in to a real request.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleSession, createPasswordAccount, signIn } from '../helpers/console.ts';
import { type Party, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let owner: ConsoleSession;
beforeAll(async () => {
  server = await startTestServer();
  await createPasswordAccount(server.ctx, { email: 'ada@example.com', name: 'Ada Lovelace' });
  owner = await signIn(server.baseUrl, 'ada@example.com');
});
afterAll(() => server.close());

/** The text of the page's environment block, as the Copy button or a selection copies it. */
function pastedEnvironment(html: string): string {
  const block = /<code id="agent-environment">([^<]*)<\/code>/.exec(html)?.[1];
  if (block === undefined) throw new Error('the page shows no environment block');
  return block
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** KEY=VALUE lines as a shell's env file reads them; comments and blank lines are skipped. */
function parseEnvironment(text: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const at = line.indexOf('=');
    expect(at, `a variable line: ${line}`).toBeGreaterThan(0);
    variables[line.slice(0, at)] = line.slice(at + 1);
  }
  return variables;
}

/** `agentauth sign-in REQUEST --any` with nothing but the pasted variables (and PATH, HOME). */
function signInWith(
  variables: Record<string, string>,
  requestId: string,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('./bin/agentauth', ['sign-in', requestId, '--any'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...variables },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function signsIn(variables: Record<string, string>): Promise<void> {
  const website = await server.createClient({ name: 'Acme Notes' });
  const party: Party = {
    ...website,
    agentId: variables.AGENTAUTH_AGENT_ID!,
    agentSecret: variables.AGENTAUTH_AGENT_SECRET!,
  };
  const started = await startFlow(server, party, { scope: 'openid' });
  const run = await signInWith(variables, started.requestId);
  expect(run.out).not.toContain(variables.AGENTAUTH_AGENT_SECRET);
  expect(run.code, run.out).toBe(0);
  expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
    status: 'authenticated',
    agent_id: variables.AGENTAUTH_AGENT_ID,
    model: variables.AGENTAUTH_MODEL,
  });
}

describe("the agent's environment as the console shows it", () => {
  it('names all four variables on a new agent, and signs in when pasted', async () => {
    const created = await owner.submit('/console/agents', { name: 'Research assistant' });
    expect(created.status).toBe(200);
    const variables = parseEnvironment(pastedEnvironment(created.text));
    expect(Object.keys(variables).sort()).toEqual([
      'AGENTAUTH_AGENT_ID',
      'AGENTAUTH_AGENT_SECRET',
      'AGENTAUTH_ISSUER',
      'AGENTAUTH_MODEL',
    ]);
    expect(variables.AGENTAUTH_ISSUER).toBe(server.baseUrl);
    await signsIn(variables);
  });

  it('is shown again after a rotation, with the new secret, and signs in when pasted', async () => {
    const created = await owner.submit('/console/agents', { name: 'Calendar agent' });
    const before = parseEnvironment(pastedEnvironment(created.text));
    const rotated = await owner.submit(`/console/agents/${before.AGENTAUTH_AGENT_ID}/rotate`, { grace: '0' });
    expect(rotated.status).toBe(200);
    const after = parseEnvironment(pastedEnvironment(rotated.text));
    expect(after.AGENTAUTH_AGENT_ID).toBe(before.AGENTAUTH_AGENT_ID);
    expect(after.AGENTAUTH_AGENT_SECRET).not.toBe(before.AGENTAUTH_AGENT_SECRET);
    await signsIn(after);
  });
});
