/**
 * `agentauth agent create --public-key FILE` and `agentauth agent rotate-key ID --public-key FILE`,
 * the real command on the server's database and through the management API of a remote server.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKeyPair } from './helpers/agent-keys.ts';
import { accountWithKey } from './helpers/api.ts';
import { cliOn } from './helpers/remote-cli.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let cli: ReturnType<typeof cliOn>;
let admin: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  server = await startTestServer();
  cli = cliOn(server);
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all', name: 'ops script' } });
});
afterAll(() => server.close());

let files = 0;
/** A file in the server's temporary directory holding `value` as JSON. */
function jsonFile(value: unknown): string {
  const path = join(server.dir, `key-${++files}.json`);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

describe.each([
  ['on the database', () => cli.localEnv(), ['--owner-email', 'ada@example.com']],
  ['on a remote server', () => cli.remoteEnv(admin.secret), ['--name', 'Remote keyed']],
] as const)('agentauth agent … with keys, %s', (_where, env, owner) => {
  it('create --public-key prints the thumbprint, no secret; rotate-key replaces the key', async () => {
    const key = await testKeyPair('EdDSA');
    const created = await cli.json(env(), ['agent', 'create', ...owner, '--public-key', jsonFile(key.publicJwk)]);
    expect(created).toMatchObject({
      agent_id: expect.stringMatching(/^agt_/),
      credential: 'key',
      key_thumbprint: await calculateJwkThumbprint(key.publicJwk),
    });
    expect(created.agent_secret).toBeUndefined();
    const id = created.agent_id as string;
    const stored = await server.ctx.store.agents.find(id);
    expect(stored!.key_thumbprint).toBe(created.key_thumbprint);

    const next = await testKeyPair('ES256');
    const { code, stdout } = await cli.agentauth(env(), [
      'agent',
      'rotate-key',
      id,
      '--public-key',
      jsonFile(next.publicJwk),
    ]);
    expect(code).toBe(0);
    const thumbprint = await calculateJwkThumbprint(next.publicJwk);
    expect(stdout).toContain(`key_thumbprint: ${thumbprint}`);
    expect(stdout).toContain('the previous key no longer works');
    expect((await server.ctx.store.agents.find(id))!.key_thumbprint).toBe(thumbprint);

    const listed = (await cli.json(env(), ['agent', 'list'])).agents as Array<Record<string, unknown>>;
    expect(listed.find((a) => a.agent_id === id)).toMatchObject({ credential: 'key', key_thumbprint: thumbprint });
  });

  it('refuses a private key file, a file that is not JSON and a missing file, with one clear line', async () => {
    const key = await testKeyPair('EdDSA');
    expect(await cli.refusal(env(), ['agent', 'create', ...owner, '--public-key', jsonFile(key.privateJwk)])).toMatch(
      /This is a private key/,
    );
    const notJson = join(server.dir, 'not-json.txt');
    writeFileSync(notJson, 'ssh-ed25519 AAAA');
    expect(await cli.refusal(env(), ['agent', 'create', ...owner, '--public-key', notJson])).toMatch(/is not JSON/);
    expect(
      await cli.refusal(env(), ['agent', 'create', ...owner, '--public-key', join(server.dir, 'none.json')]),
    ).toMatch(/cannot read the public key file .*ENOENT/);
  });

  it('rotate-secret of a key-bound agent is refused', async () => {
    const key = await testKeyPair('EdDSA');
    const created = await cli.json(env(), ['agent', 'create', ...owner, '--public-key', jsonFile(key.publicJwk)]);
    expect(await cli.refusal(env(), ['agent', 'rotate-secret', created.agent_id as string])).toMatch(
      /proves itself with a key/,
    );
  });
});

it('the text output names the thumbprint and says there is no secret', async () => {
  const key = await testKeyPair('EdDSA');
  const { code, stdout } = await cli.agentauth(cli.localEnv(), [
    'agent',
    'create',
    '--owner-email',
    'ada@example.com',
    '--public-key',
    jsonFile(key.publicJwk),
  ]);
  expect(code).toBe(0);
  expect(stdout).toMatch(
    /^agent_id: +agt_\S+\nkey_thumbprint: \S{43}\n\(the agent proves itself with its private key; it has no secret\)\n$/,
  );
});
