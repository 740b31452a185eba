/**
 * The Python SDK learns of the agent's actions as the TypeScript one does (issue 39): its
 * list_actions and wait_for_action against a real server, run through python/tests/sdk_driver.py
 * as test/agent-sdk-python.test.ts runs the rest of its surface: waiting, then approved by the
 * owner, with the words; wrong credentials are InvalidCredentialsError; the secret never printed.
 *
 * @engine-independent a client of GET /api/agent/actions, which test/owner-actions/approvals.test.ts
 * runs on both engines.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { obtainTokens, postForm } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { PAYMENT } from '../helpers/action-requests.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DRIVER = join(ROOT, 'python', 'tests', 'sdk_driver.py');
const PYTHON = process.env.PYTHON ?? 'python3';

interface Outcome {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  ok: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: whatever the Python script printed as JSON
  result: any;
  error: { type: string; code: string; description: string };
}

/**
 * One SDK operation in python3, with the agent's AGENTAUTH_* environment: its outcome, and a
 * promise of the first time it wrote `pattern` on stderr.
 */
function startPython(spec: object, env: Record<string, string>, pattern = /$^/) {
  const child = spawn(PYTHON, [DRIVER], {
    cwd: tmpdir(),
    env: {
      PATH: process.env.PATH,
      PYTHONPATH: join(ROOT, 'python', 'src'),
      PYTHONDONTWRITEBYTECODE: '1',
      NO_PROXY: '*',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let said: () => void = () => {};
  const logged = new Promise<void>((resolveLogged) => {
    said = resolveLogged;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    if (pattern.test(stderr)) said();
  });
  child.stdin.end(JSON.stringify(spec));
  const done = new Promise<Outcome>((resolveRun, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolveRun({ ...(JSON.parse(line) as Outcome), exitCode, stdout, stderr });
      } catch {
        reject(new Error(`python exited ${exitCode} without a JSON line.\nstdout: ${stdout}\nstderr: ${stderr}`));
      }
    });
  });
  return { done, logged };
}

const runPython = (spec: object, env: Record<string, string>) => startPython(spec, env).done;

let server: TestServer;
let session: ConsoleSession;
let shop: { clientId: string; clientSecret: string; redirectUri: string };
let agent: { agentId: string; agentSecret: string };
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ env: { ACTION_APPROVALS: 'on' } });
  const owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  shop = await server.createClient({ name: 'Acme Notes' });
  await server.ctx.store.clients.update(shop.clientId, { action_types: [PAYMENT] });
  const made = await createOwnedAgent(server.ctx, owner, 'Research assistant');
  agent = { agentId: made.agent.id, agentSecret: made.secret };
  await obtainTokens(server, { ...shop, ...agent }, { scope: 'openid' });
  env = {
    AGENTAUTH_ISSUER: server.baseUrl,
    AGENTAUTH_AGENT_ID: agent.agentId,
    AGENTAUTH_AGENT_SECRET: agent.agentSecret,
  };
});
afterAll(() => server?.close());

describe('the Python SDK and the actions its owner is asked about', () => {
  it('lists an action waiting, waits for the owner, and reads it approved', async () => {
    const asked = await postForm(server, '/bc-authorize', {
      client_id: shop.clientId,
      client_secret: shop.clientSecret,
      scope: 'openid',
      login_hint: agent.agentId,
      authorization_details: JSON.stringify([{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }]),
    });
    expect(asked.status).toBe(200);

    const listed = await runPython({ op: 'list_actions' }, env);
    expect(listed.ok).toBe(true);
    expect(listed.result).toHaveLength(1);
    expect(listed.result[0]).toMatchObject({
      client_name: 'Acme Notes',
      words: ['Pay 20 EUR to Acme'],
      message: 'Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)',
      status: 'pending',
      answered_by: null,
    });

    const waiting = startPython(
      { op: 'wait_for_action', args: { action_id: listed.result[0].id, timeout: 30 } },
      env,
      /waiting for the owner/,
    );
    await waiting.logged;
    const approval = (
      await server.ctx.store.approvals.list({ accountId: null, status: 'pending', now: server.clock(), limit: 5 })
    ).find((each) => each.agent_id === agent.agentId)!;
    await session.get(`/console/approvals/${approval.id}`);
    await session.submit(`/console/approvals/${approval.id}/decide`, { decision: 'once', password: TEST_PASSWORD });
    const decided = await waiting.done;
    expect(decided.ok).toBe(true);
    expect(decided.result).toMatchObject({
      told: ['Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)'],
      action: {
        status: 'approved',
        answered_by: 'owner',
        message: 'Your owner approved: Pay 20 EUR to Acme (Acme Notes)',
      },
    });

    const wrong = await runPython({ op: 'list_actions' }, { ...env, AGENTAUTH_AGENT_SECRET: 'aas_not-the-secret' });
    expect(wrong.ok).toBe(false);
    expect(wrong.error).toMatchObject({ type: 'InvalidCredentialsError', code: 'invalid_credentials' });
    for (const outcome of [listed, decided, wrong])
      expect(outcome.stdout + outcome.stderr).not.toContain(agent.agentSecret);
  }, 30_000);
});
