/**
 * Key-bound agents with the TypeScript SDK and `agentauth-agent` (docs/design.md §16): keygen
 * writes the private key for the agent alone and prints the public key; the owner registers it;
 * the SDK, `sign-in --key-file` and the environment sign in with a fresh assertion each time.
 * Against a real server over real HTTP; the command is the built one (dist/cli.js).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentKeyOf, registerKeyBoundAgent } from '../../../src/domain/agents.ts';
import { continueFlow, startFlow } from '../../../test/helpers/flow.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/server.ts';
import {
  AgentAuth,
  ConfigurationError,
  generateAgentKey,
  InvalidCredentialsError,
  keyThumbprint,
  publicKeyOf,
  readPrivateKey,
} from '../src/index.ts';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
const REDIRECT_URI = 'https://notes.acme.example/callback';
const HOST = 'notes.acme.example';

let server: TestServer;
let website: Awaited<ReturnType<TestServer['createClient']>>;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  website = await server.createClient({ name: 'Acme Notes', redirectUris: [REDIRECT_URI] });
});
afterAll(() => server.close());

/** Registers a key-bound agent for `publicKey`, as its owner does with the CLI, console or API. */
async function register(publicKey: object): Promise<string> {
  const agent = await registerKeyBoundAgent(server.ctx, { ownerEmail: 'ada@example.com' }, agentKeyOf(publicKey));
  return agent.id;
}

const started = () => startFlow(server, { ...website, agentId: '', agentSecret: '' });

describe('the SDK with a private key', () => {
  it.each(['Ed25519', 'ES256'] as const)('%s: signs in and the browser completes', async (alg) => {
    const { privateKey, publicKey } = await generateAgentKey(alg);
    const agentId = await register(publicKey);
    const agent = new AgentAuth({ issuer: server.baseUrl, agentId, privateKey, model: 'm' });
    const flow = await started();
    const result = await agent.signIn({ requestId: flow.requestId, expect: { host: HOST } });
    expect(result).toMatchObject({ status: 'authenticated', request_id: flow.requestId });
    const stored = await server.ctx.store.requests.find(flow.requestId);
    expect(stored).toMatchObject({ status: 'authenticated', agent_id: agentId });
    expect((await continueFlow(server, flow)).status).toBe(302);
    expect(await agent.waitForCompletion(flow.requestId)).toEqual({ status: 'completed' });
  });

  it('takes the key as JSON text from AGENTAUTH_AGENT_KEY; the same key signs in again (a new assertion each time)', async () => {
    const { privateKey, publicKey } = await generateAgentKey('Ed25519');
    const agentId = await register(publicKey);
    const saved = { ...process.env };
    try {
      process.env.AGENTAUTH_AGENT_KEY = JSON.stringify(privateKey);
      delete process.env.AGENTAUTH_AGENT_SECRET;
      const agent = new AgentAuth({ issuer: server.baseUrl, agentId, model: 'm' });
      for (let i = 0; i < 2; i++) {
        const flow = await started();
        expect((await agent.signIn({ requestId: flow.requestId, expect: 'any' })).status).toBe('authenticated');
      }
    } finally {
      process.env = saved;
    }
  });

  it('a retry after 503 sends a fresh assertion (a replayed one would be refused)', async () => {
    const { privateKey, publicKey } = await generateAgentKey('ES256');
    const agentId = await register(publicKey);
    const sent: string[] = [];
    let refusedOnce = false;
    const agent = new AgentAuth({
      issuer: server.baseUrl,
      agentId,
      privateKey,
      model: 'm',
      fetch: async (input, init) => {
        if (String(input).endsWith('/api/agent/authenticate')) {
          sent.push(JSON.parse(String(init?.body)).agent_assertion);
          if (!refusedOnce) {
            refusedOnce = true;
            return new Response(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'busy' }), {
              status: 503,
              headers: { 'content-type': 'application/json', 'retry-after': '0' },
            });
          }
        }
        return fetch(input, init);
      },
    });
    const flow = await started();
    expect((await agent.signIn({ requestId: flow.requestId, expect: 'any' })).status).toBe('authenticated');
    expect(sent).toHaveLength(2);
    expect(sent[0]).not.toBe(sent[1]);
    const jti = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti;
    expect(jti(sent[0]!)).not.toBe(jti(sent[1]!));
  });

  it('another key is refused by the server (InvalidCredentialsError); a public key or two credentials are refused here', async () => {
    const registered = await generateAgentKey('Ed25519');
    const agentId = await register(registered.publicKey);
    const other = await generateAgentKey('Ed25519');
    const agent = new AgentAuth({ issuer: server.baseUrl, agentId, privateKey: other.privateKey, model: 'm' });
    const flow = await started();
    await expect(agent.signIn({ requestId: flow.requestId, expect: 'any' })).rejects.toBeInstanceOf(
      InvalidCredentialsError,
    );
    expect(
      () => new AgentAuth({ issuer: server.baseUrl, agentId, privateKey: registered.publicKey, model: 'm' }),
    ).toThrow(ConfigurationError);
    expect(
      () => new AgentAuth({ issuer: server.baseUrl, agentId, privateKey: registered.privateKey, agentSecret: 'aas_x' }),
    ).toThrow(/not both/);
    expect(() => readPrivateKey('not json')).toThrow(/not JSON/);
  });

  it('the thumbprint the SDK computes is the server’s and jose’s (RFC 7638)', async () => {
    for (const alg of ['Ed25519', 'ES256'] as const) {
      const { privateKey } = await generateAgentKey(alg);
      const publicKey = publicKeyOf(privateKey);
      const ours = await keyThumbprint(publicKey);
      expect(ours).toBe(agentKeyOf(publicKey).thumbprint);
      expect(ours).toBe(await calculateJwkThumbprint(publicKey as never));
    }
  });
});

describe('agentauth-agent keygen and sign-in --key-file', () => {
  const env = (extra: Record<string, string> = {}) =>
    ({ PATH: process.env.PATH, HOME: process.env.HOME, ...extra }) as NodeJS.ProcessEnv;

  async function agentauthAgent(args: string[], extra: Record<string, string> = {}) {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: env(extra) });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
    }
  }

  it('keygen writes the private key with mode 0600, prints the public key and thumbprint, and never overwrites', async () => {
    const out = join(server.dir, 'keygen-ed.json');
    const made = await agentauthAgent(['keygen', '--out', out]);
    expect(made.code).toBe(0);
    const publicKey = JSON.parse(made.stdout);
    expect(Object.keys(publicKey).sort()).toEqual(['crv', 'kty', 'x']);
    expect(publicKey).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    const thumbprint = await calculateJwkThumbprint(publicKey);
    expect(made.stderr).toContain(`key_thumbprint: ${thumbprint}`);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(out, 'utf8'));
    expect(stored).toMatchObject({ ...publicKey, d: expect.any(String), alg: 'EdDSA', kid: thumbprint });
    expect(made.stdout).not.toContain(stored.d);

    const again = await agentauthAgent(['keygen', '--out', out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists; keygen does not overwrite/);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(stored);

    const es = await agentauthAgent([
      'keygen',
      '--out',
      join(server.dir, 'keygen-es.json'),
      '--alg',
      'ES256',
      '--json',
    ]);
    expect(JSON.parse(es.stdout)).toMatchObject({
      public_key: { kty: 'EC', crv: 'P-256' },
      key_thumbprint: expect.stringMatching(/^[\w-]{43}$/),
    });
  });

  it('keygen makes the folder of --out for its user alone, writes --public-out after the private key, and refuses either file existing before writing anything', async () => {
    // As the guide says on a fresh machine: ~/.agentauth does not exist yet.
    const home = join(server.dir, 'fresh-home');
    const out = join(home, '.agentauth', 'agent-key.json');
    const publicOut = join(server.dir, 'fresh-public.jwk');
    const made = await agentauthAgent(['keygen', '--out', out, '--public-out', publicOut]);
    expect(made.code, made.stderr).toBe(0);
    expect(statSync(join(home, '.agentauth')).mode & 0o777).toBe(0o700);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const publicKey = JSON.parse(readFileSync(publicOut, 'utf8'));
    expect(publicKey).toEqual(JSON.parse(made.stdout));
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ ...publicKey, d: expect.any(String) });

    // The public file exists: nothing is written, not even a new private key.
    const otherOut = join(home, '.agentauth', 'second-key.json');
    const refused = await agentauthAgent(['keygen', '--out', otherOut, '--public-out', publicOut]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${publicOut} exists; keygen does not overwrite`);
    expect(refused.stdout).toBe('');
    expect(existsSync(otherOut)).toBe(false);
    expect(JSON.parse(readFileSync(publicOut, 'utf8'))).toEqual(publicKey);
  });

  it('the key keygen made signs in with sign-in --key-file and with AGENTAUTH_AGENT_KEY_FILE; a key file others can read is refused', async () => {
    const out = join(server.dir, 'keygen-signin.json');
    const made = await agentauthAgent(['keygen', '--out', out, '--alg', 'ES256']);
    const agentId = await register(JSON.parse(made.stdout));
    const base = { AGENTAUTH_ISSUER: server.baseUrl, AGENTAUTH_AGENT_ID: agentId, AGENTAUTH_MODEL: 'm' };

    const first = await started();
    const withFlag = await agentauthAgent(
      ['sign-in', first.requestId, '--expect-host', HOST, '--key-file', out, '--json'],
      base,
    );
    expect(withFlag.code).toBe(0);
    expect(JSON.parse(withFlag.stdout)).toMatchObject({ status: 'authenticated', agent_id: agentId });
    expect((await server.ctx.store.requests.find(first.requestId))!.status).toBe('authenticated');

    const second = await started();
    const withEnv = await agentauthAgent(['sign-in', second.requestId, '--expect-host', HOST], {
      ...base,
      AGENTAUTH_AGENT_KEY_FILE: out,
    });
    expect(withEnv.code).toBe(0);
    expect(withEnv.stdout).toMatch(/^Signed in as agt_/);

    const both = await agentauthAgent(['sign-in', second.requestId, '--expect-host', HOST], {
      ...base,
      AGENTAUTH_AGENT_KEY_FILE: out,
      AGENTAUTH_AGENT_SECRET: 'aas_leftover',
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/keep one/);

    const shared = join(server.dir, 'shared-key.json');
    writeFileSync(shared, readFileSync(out));
    chmodSync(shared, 0o644);
    const third = await started();
    const refused = await agentauthAgent(
      ['sign-in', third.requestId, '--expect-host', HOST, '--key-file', shared],
      base,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/can be read by other users: make it yours alone \(chmod 600/);
    expect((await server.ctx.store.requests.find(third.requestId))!.status).toBe('pending');
  });

  it('the MCP server (agentauth-agent mcp) signs in with AGENTAUTH_AGENT_KEY_FILE, and with --key-file', async () => {
    const out = join(server.dir, 'keygen-mcp.json');
    const made = await agentauthAgent(['keygen', '--out', out]);
    const agentId = await register(JSON.parse(made.stdout));
    for (const [args, extra] of [
      [['mcp'], { AGENTAUTH_AGENT_KEY_FILE: out }],
      [['mcp', '--key-file', out], {}],
    ] as const) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, ...args],
        env: {
          PATH: process.env.PATH!,
          HOME: process.env.HOME!,
          AGENTAUTH_ISSUER: server.baseUrl,
          AGENTAUTH_AGENT_ID: agentId,
          AGENTAUTH_MODEL: 'mcp-model',
          ...extra,
        },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'agentauth-keys-test', version: '0.0.0' });
      await client.connect(transport);
      try {
        const flow = await started();
        const result = (await client.callTool({
          name: 'sign_in',
          arguments: { request_id: flow.requestId, expected_host: HOST },
        })) as { isError?: boolean; content: Array<{ text: string }> };
        expect(result.isError ?? false).toBe(false);
        expect(JSON.parse(result.content.at(-1)!.text)).toMatchObject({ status: 'authenticated' });
        expect(await server.ctx.store.requests.find(flow.requestId)).toMatchObject({
          status: 'authenticated',
          agent_id: agentId,
        });
        expect(JSON.stringify(result)).not.toContain(JSON.parse(readFileSync(out, 'utf8')).d);
      } finally {
        await client.close();
      }
    }
  });
});
