/**
 * Key-bound agents with the Python SDK (python/src/agentauth/keys.py, docs/design.md §16): the
 * real package run by python3 (with `cryptography`, the `keys` extra; Debian's
 * python3-cryptography in CI) through python/tests/sdk_driver.py, against a real server.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentKeyOf, registerKeyBoundAgent } from '../src/domain/agents.ts';
import { continueFlow, redeem, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const ROOT = join(import.meta.dirname, '..');
const PY_SRC = join(ROOT, 'python', 'src');
const DRIVER = join(ROOT, 'python', 'tests', 'sdk_driver.py');
const PYTHON = process.env.PYTHON ?? 'python3';
const HOST = 'notes.acme.example';

let server: TestServer;
let website: Awaited<ReturnType<TestServer['createClient']>>;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  website = await server.createClient({ name: 'Acme Notes', redirectUris: [`https://${HOST}/callback`] });
});
afterAll(() => server.close());

interface Outcome {
  ok: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: the driver's JSON, asserted field by field
  result?: any;
  error?: { type: string; description: string; repr: string; str: string };
  stdout: string;
  stderr: string;
}

/** One SDK operation in python3, its outcome as the driver prints it. */
function python(spec: object, env: Record<string, string> = {}, pythonPath = PY_SRC): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const base: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('AGENTAUTH_')) base[name] = value;
    const child = spawn(PYTHON, [DRIVER], {
      env: { ...base, PYTHONPATH: pythonPath, PYTHONDONTWRITEBYTECODE: '1', NO_PROXY: '*', no_proxy: '*', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.stdin.end(JSON.stringify(spec));
    child.on('close', () => {
      try {
        resolve({ ...(JSON.parse(stdout.trim().split('\n').pop()!) as Outcome), stdout, stderr });
      } catch {
        reject(new Error(`python printed no JSON line.\nstdout: ${stdout}\nstderr: ${stderr}`));
      }
    });
  });
}

function ok(outcome: Outcome) {
  if (!outcome.ok) throw new Error(`python failed: ${outcome.error?.repr}\n${outcome.stderr}`);
  return outcome.result;
}

let files = 0;
const keyPath = () => join(server.dir, `py-key-${++files}.json`);

async function keyBoundAgent(alg: 'Ed25519' | 'ES256') {
  const path = keyPath();
  const made = ok(await python({ op: 'generate_key', args: { path, alg } }));
  const agent = await registerKeyBoundAgent(server.ctx, { ownerEmail: 'ada@example.com' }, agentKeyOf(made.public_key));
  return { agentId: agent.id, path, made };
}

const started = () => startFlow(server, { ...website, agentId: '', agentSecret: '' });

describe('the Python SDK with a key', () => {
  it.each(['Ed25519', 'ES256'] as const)(
    '%s: generate_key writes the private key (0600), its public key registers, and sign_in goes through to the token',
    async (alg) => {
      const { agentId, path, made } = await keyBoundAgent(alg);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(made.key_thumbprint).toBe(await calculateJwkThumbprint(made.public_key));
      expect((await server.ctx.store.agents.find(agentId))!.key_thumbprint).toBe(made.key_thumbprint);
      const flow = await started();
      const signedIn = await python({
        op: 'sign_in',
        config: { issuer: server.baseUrl, agent_id: agentId, key_file: path, model: 'py-model' },
        args: { request_id: flow.requestId, expect_host: HOST },
      });
      expect(ok(signedIn)).toMatchObject({ request_id: flow.requestId });
      expect(await server.ctx.store.requests.find(flow.requestId)).toMatchObject({
        status: 'authenticated',
        agent_id: agentId,
      });
      const redirect = await continueFlow(server, flow);
      const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
      expect((await redeem(server, { ...website, agentId, agentSecret: '' }, code, flow.verifier)).status).toBe(200);
      const privateKey = JSON.parse(readFileSync(path, 'utf8')) as { d: string };
      expect(signedIn.stdout + signedIn.stderr).not.toContain(privateKey.d);
    },
  );

  it('takes AGENTAUTH_AGENT_KEY_FILE, or the private JWK itself; signs a new assertion for each sign-in', async () => {
    const { agentId, path } = await keyBoundAgent('Ed25519');
    const env = { AGENTAUTH_ISSUER: server.baseUrl, AGENTAUTH_AGENT_ID: agentId, AGENTAUTH_MODEL: 'm' };
    for (let i = 0; i < 2; i++) {
      const flow = await started();
      ok(
        await python(
          { op: 'sign_in', args: { request_id: flow.requestId, expect_any: true } },
          { ...env, AGENTAUTH_AGENT_KEY_FILE: path },
        ),
      );
    }
    const flow = await started();
    const jwk = JSON.parse(readFileSync(path, 'utf8'));
    ok(
      await python(
        { op: 'sign_in', config: { private_key: jwk }, args: { request_id: flow.requestId, expect_any: true } },
        env,
      ),
    );
    const shown = ok(await python({ op: 'repr', config: { private_key: jwk } }, env));
    expect(JSON.stringify(shown)).not.toContain(jwk.d);
  });

  it('is refused by the server with another key (InvalidCredentialsError), and refuses here: a shared key file, a key and a secret, a public key', async () => {
    const { agentId } = await keyBoundAgent('Ed25519');
    const stranger = keyPath();
    const strangerKey = ok(await python({ op: 'generate_key', args: { path: stranger } }));
    const env = { AGENTAUTH_ISSUER: server.baseUrl, AGENTAUTH_AGENT_ID: agentId, AGENTAUTH_MODEL: 'm' };
    const flow = await started();
    const refused = await python(
      { op: 'sign_in', config: { key_file: stranger }, args: { request_id: flow.requestId, expect_any: true } },
      env,
    );
    expect(refused.error).toMatchObject({ type: 'InvalidCredentialsError' });

    chmodSync(stranger, 0o644);
    const shared = await python({ op: 'construct', config: { key_file: stranger } }, env);
    expect(shared.error).toMatchObject({ type: 'ConfigurationError', description: expect.stringMatching(/chmod 600/) });
    const both = await python({ op: 'construct', config: { key_file: stranger, agent_secret: 'aas_x' } }, env);
    expect(both.error?.description).toMatch(/not several/);
    const publicOnly = await python({ op: 'construct', config: { private_key: strangerKey.public_key } }, env);
    expect(publicOnly.error?.description).toMatch(/no private part/);
    const overwrite = await python({ op: 'generate_key', args: { path: stranger } });
    expect(overwrite.error?.description).toMatch(/exists; a key is never overwritten/);
  });

  it('without the cryptography package, a key gives a clear ConfigurationError and a secret agent works as before', async () => {
    // A cryptography that cannot be imported, ahead of the real one on the path.
    const shadow = join(server.dir, 'no-cryptography');
    mkdirSync(join(shadow, 'cryptography'), { recursive: true });
    writeFileSync(join(shadow, 'cryptography', '__init__.py'), 'raise ImportError("not installed")\n');
    const pythonPath = `${shadow}:${PY_SRC}`;
    const { path } = await keyBoundAgent('Ed25519');
    const missing = await python(
      { op: 'construct', config: { issuer: server.baseUrl, key_file: path } },
      {},
      pythonPath,
    );
    expect(missing.error).toMatchObject({
      type: 'ConfigurationError',
      description: expect.stringMatching(/pip install 'agentauth\[keys\]'/),
    });
    const secretAgent = await server.createAgent();
    const flow = await started();
    ok(
      await python(
        {
          op: 'sign_in',
          config: {
            issuer: server.baseUrl,
            agent_id: secretAgent.agentId,
            agent_secret: secretAgent.agentSecret,
            model: 'm',
          },
          args: { request_id: flow.requestId, expect_any: true },
        },
        {},
        pythonPath,
      ),
    );
  });
});
