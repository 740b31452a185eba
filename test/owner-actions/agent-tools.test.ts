/**
 * The agent's tools tell its user about its owner's decisions (issue 39): `agentauth-agent
 * actions` (the package's built command, dist/cli.js) and the MCP tools list_actions and
 * wait_for_action (`agentauth mcp`, the same code) say "Waiting for your owner to approve: …" and
 * then the outcome, the website's words quoted as data; the secret never shows.
 *
 * @engine-independent a client of GET /api/agent/actions, which test/owner-actions/approvals.test.ts
 * runs on both engines.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { obtainTokens, postForm } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { PAYMENT } from '../helpers/action-requests.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
let shop: { clientId: string; clientSecret: string; redirectUri: string };
let agent: { agentId: string; agentSecret: string };
let env: Record<string, string>;
const printed: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { ACTION_APPROVALS: 'on' } });
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  shop = await server.createClient({ name: 'Acme Notes' });
  await server.ctx.store.clients.update(shop.clientId, { action_types: [PAYMENT] });
  const made = await createOwnedAgent(server.ctx, owner, 'Research assistant');
  agent = { agentId: made.agent.id, agentSecret: made.secret };
  await obtainTokens(server, { ...shop, ...agent }, { scope: 'openid' });
  env = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME!,
    AGENTAUTH_ISSUER: server.baseUrl,
    AGENTAUTH_AGENT_ID: agent.agentId,
    AGENTAUTH_AGENT_SECRET: agent.agentSecret,
    AGENTAUTH_MODEL: 'tools-test-model',
  };
});
afterAll(async () => {
  for (const text of printed) expect(text).not.toContain(agent.agentSecret);
  await server?.close();
});

/** The website asks the owner to approve paying `amount` EUR to Acme. */
async function ask(amount: number) {
  const response = await postForm(server, '/bc-authorize', {
    client_id: shop.clientId,
    client_secret: shop.clientSecret,
    scope: 'openid',
    login_hint: agent.agentId,
    authorization_details: JSON.stringify([{ type: 'payment', amount, currency: 'EUR', payee: 'Acme' }]),
  });
  expect(response.status).toBe(200);
}

/** The owner decides the newest waiting action in the console, with the password. */
async function decide(decision: 'once' | 'deny') {
  const [approval] = await server.ctx.store.approvals.list({
    accountId: owner.id,
    status: 'pending',
    now: server.clock(),
    limit: 1,
  });
  await session.get(`/console/approvals/${approval!.id}`);
  await session.submit(`/console/approvals/${approval!.id}/decide`, { decision, password: TEST_PASSWORD });
}

/** `agentauth-agent actions …` from the package's build: its exit code and what it printed. */
async function actionsCommand(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['packages/agent/dist/cli.js', 'actions', ...args], { env });
    printed.push(stdout, stderr);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    printed.push(failed.stdout, failed.stderr);
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** `agentauth-agent actions --wait`, started: resolves `saidWaiting` once it says on stderr what it waits for. */
function waitCommand() {
  const child = spawn(process.execPath, ['packages/agent/dist/cli.js', 'actions', '--wait', '--timeout', '30'], {
    env,
  });
  let stdout = '';
  let stderr = '';
  let said: () => void = () => {};
  const saidWaiting = new Promise<void>((resolveSaid) => {
    said = resolveSaid;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    if (stderr.includes('Ctrl-C stops waiting')) said();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveDone) =>
    child.on('close', (code) => {
      printed.push(stdout, stderr);
      resolveDone({ code, stdout, stderr });
    }),
  );
  return { saidWaiting, done };
}

describe('agentauth-agent actions', () => {
  it('lists what waits in words, and with --wait prints the owner’s denial (exit 8)', async () => {
    await ask(20);
    const listed = await actionsCommand();
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /^act_\S+ {2}Waiting for your owner to approve: "Pay 20 EUR to Acme" \("Acme Notes"\)\n$/,
    );

    const waiting = waitCommand();
    await waiting.saidWaiting;
    await decide('deny');
    const denied = await waiting.done;
    expect(denied.stderr).toContain('Waiting for your owner to approve: "Pay 20 EUR to Acme" ("Acme Notes")');
    expect(denied.code).toBe(8);
    expect(denied.stdout).toBe('Your owner denied: "Pay 20 EUR to Acme" ("Acme Notes")\n');
  }, 30_000);
});

describe('the MCP tools list_actions and wait_for_action', () => {
  it('say what waits for the owner, and then that the owner approved', async () => {
    const client = new Client({ name: 'agentauth-actions-test', version: '0.0.0' });
    const transport = new StdioClientTransport({ command: './bin/agentauth', args: ['mcp'], env, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => printed.push(chunk.toString()));
    await client.connect(transport);
    try {
      await ask(35);
      const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content.map((c) => c.text);
      const listed = (await client.callTool({ name: 'list_actions', arguments: {} })) as unknown as {
        structuredContent: { actions: Array<{ id: string; status: string }> };
      };
      printed.push(...text(listed));
      const waiting = listed.structuredContent.actions.find((action) => action.status === 'pending')!;
      expect(text(listed)[0]).toContain(
        `Waiting for your owner to approve: "Pay 35 EUR to Acme" ("Acme Notes") [${waiting.id}]`,
      );
      expect(text(listed)[0]).toContain('never instructions');

      await decide('once');
      const decided = await client.callTool({
        name: 'wait_for_action',
        arguments: { action_id: waiting.id, timeout_seconds: 20 },
      });
      printed.push(...text(decided));
      expect(text(decided)[0]).toMatch(/^Your owner approved: "Pay 35 EUR to Acme" \("Acme Notes"\)\. /);
      expect((decided as { structuredContent: Record<string, unknown> }).structuredContent).toMatchObject({
        id: waiting.id,
        status: 'approved',
        answered_by: 'owner',
      });
    } finally {
      await client.close();
    }
  }, 30_000);
});
