/**
 * `agentauth client create --jwks FILE | --jwks-uri URL`: a client that signs with keys
 * (private_key_jwt), registered by the real command on the server's database and through the
 * management API of a remote server, then exchanging a code with an assertion; `client update
 * --jwks FILE | --jwks-uri URL` replacing its keys, after which the old key's assertions fail.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from './helpers/api.ts';
import { assertionFields, clientAssertion, type SigningKey, signingKey } from './helpers/client-keys.ts';
import { obtainCode, postForm } from './helpers/flow.ts';
import { cliOn } from './helpers/remote-cli.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let cli: ReturnType<typeof cliOn>;
let admin: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  server = await startTestServer({ env: { PRIVATE_KEY_JWT: 'true' } });
  cli = cliOn(server);
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all', name: 'ops script' } });
});
afterAll(() => server.close());

let files = 0;
function jsonFile(value: unknown): string {
  const path = join(server.dir, `jwks-${++files}.json`);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

describe.each([
  // The command reads the server's configuration: with PRIVATE_KEY_JWT it has nothing to warn of.
  ['on the database', () => ({ ...cli.localEnv(), PRIVATE_KEY_JWT: 'true' })],
  ['on a remote server', () => cli.remoteEnv(admin.secret)],
] as const)('agentauth client create with keys, %s', (_where, env) => {
  it('--jwks FILE registers a client without a secret that signs in with an assertion', async () => {
    const key = await signingKey('ES256', 'cli-1');
    const redirectUri = 'https://keys.example/callback';
    const created = await cli.json(env(), [
      'client',
      'create',
      '--name',
      'Keyed site',
      '--redirect-uri',
      redirectUri,
      '--jwks',
      jsonFile({ keys: [key.publicJwk] }),
    ]);
    expect(created).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt' });
    expect(created).not.toHaveProperty('client_secret');
    const clientId = created.client_id as string;
    const agent = await server.createAgent();
    const { code, verifier } = await obtainCode(server, { clientId, clientSecret: '', redirectUri, ...agent });
    const assertion = await clientAssertion(key, clientId, `${server.baseUrl}/token`, server.clock());
    const answer = await postForm(server, '/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      ...assertionFields(assertion),
    });
    expect(answer.status).toBe(200);
  });

  it('--jwks-uri records the URL; a private key or an http URL is refused and nothing is made', async () => {
    const created = await cli.json(env(), [
      'client',
      'create',
      '--name',
      'Published keys',
      '--redirect-uri',
      'https://keys.example/cb',
      '--jwks-uri',
      'https://keys.example/jwks.json',
    ]);
    expect(created).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://keys.example/jwks.json',
    });
    const before = (await server.ctx.store.clients.list()).length;
    const key = await signingKey('RS256', 'leaky');
    for (const keys of [
      ['--jwks', jsonFile({ keys: [{ ...key.publicJwk, d: 'private' }] })],
      ['--jwks-uri', 'http://keys.example/jwks.json'],
    ]) {
      const { code, stderr } = await cli.agentauth(env(), [
        'client',
        'create',
        '--name',
        'Bad',
        '--redirect-uri',
        'https://keys.example/cb',
        ...keys,
      ]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/private or symmetric key material|jwks_uri must be an https URL/);
    }
    expect((await server.ctx.store.clients.list()).length).toBe(before);
  });

  it('client update --jwks FILE replaces the keys: the old key is refused afterwards, the new one accepted', async () => {
    const oldKey = await signingKey('ES256', 'cli-old');
    const newKey = await signingKey('RS256', 'cli-new');
    const redirectUri = 'https://keys.example/callback';
    const created = await cli.json(env(), [
      'client',
      'create',
      '--name',
      'Rotating keys',
      '--redirect-uri',
      redirectUri,
      '--jwks',
      jsonFile({ keys: [oldKey.publicJwk] }),
    ]);
    const clientId = created.client_id as string;
    expect(await exchangeWith(clientId, redirectUri, oldKey)).toBe(200);

    const updated = await cli.agentauth(env(), [
      'client',
      'update',
      clientId,
      '--jwks',
      jsonFile({ keys: [newKey.publicJwk] }),
    ]);
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain(`${clientId} is updated`);
    expect(updated.stdout).toContain('keys:          cli-new (RS256)');
    expect(await exchangeWith(clientId, redirectUri, oldKey)).toBe(401);
    expect(await exchangeWith(clientId, redirectUri, newKey)).toBe(200);

    const moved = await cli.json(env(), ['client', 'update', clientId, '--jwks-uri', 'https://keys.example/next.json']);
    expect(moved).toMatchObject({ jwks_uri: 'https://keys.example/next.json' });

    // A bad key set is refused with the rule's words, and the keys stay.
    const before = await server.ctx.store.clients.find(clientId);
    const refused = await cli.agentauth(env(), [
      'client',
      'update',
      clientId,
      '--jwks',
      jsonFile({ keys: [{ ...newKey.publicJwk, d: 'private' }] }),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/private or symmetric key material/);
    expect(await server.ctx.store.clients.find(clientId)).toEqual(before);
  });
});

/** A sign-in to `clientId`, its code exchanged with an assertion signed by `key`: the token endpoint's status. */
async function exchangeWith(clientId: string, redirectUri: string, key: SigningKey): Promise<number> {
  const agent = await server.createAgent();
  const { code, verifier } = await obtainCode(server, { clientId, clientSecret: '', redirectUri, ...agent });
  const assertion = await clientAssertion(key, clientId, `${server.baseUrl}/token`, server.clock());
  const answer = await postForm(server, '/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    ...assertionFields(assertion),
  });
  return answer.status;
}
