/**
 * /api/admin/v1/signing-keys over real HTTP on both engines (docs/design.md §19): an admin's `all`
 * key lists and rotates the key set, anyone else is refused, no private key is ever answered; and
 * `agentauth signing-key` does the same through the API with AGENTAUTH_URL.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { cliOn } from '../helpers/remote-cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** One JWKS cache period and one reload of the nodes: the least age at which a next key may sign. */
const PUBLISHED_AHEAD = 3600 + 30;

let server: TestServer;
let admin: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  server = await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256' } });
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
});
afterAll(() => server?.close());

const stateOf = (keys: { kid: string; state: string }[], state: string) =>
  keys.filter((key) => key.state === state).map((key) => key.kid);

describe('the signing keys API', () => {
  it('is in the OpenAPI document, which a standard validator accepts', async () => {
    const doc = await admin.call('GET', '/openapi.json');
    expect(Object.keys(doc.json.paths)).toEqual(expect.arrayContaining(['/signing-keys', '/signing-keys/rotate']));
    expect(doc.json.components.schemas.SigningKey).toBeDefined();
    const result = await new Validator().validate(doc.json);
    expect(result.errors ?? []).toEqual([]);
  });

  it('lists the set with states and times, never key material', async () => {
    const answer = await admin.call('GET', '/signing-keys');
    expect(answer.status).toBe(200);
    const stored = await server.ctx.store.signingKeys.list();
    expect(answer.json.data).toHaveLength(2);
    for (const key of answer.json.data) {
      expect(Object.keys(key).sort()).toEqual(
        ['activated_at', 'alg', 'created_at', 'kid', 'published_until', 'retired_at', 'state'].sort(),
      );
      expect(key.alg).toBe('ES256');
    }
    expect(answer.text).not.toContain(stored[0]!.private_key_sealed.slice(0, 20));
    expect(stateOf(answer.json.data, 'current')).toEqual(stored.filter((k) => k.state === 'current').map((k) => k.kid));
  });

  it('refuses a member’s key, an admin’s own key, and a read-only key to rotate', async () => {
    const member = await accountWithKey(server);
    const ownAdmin = await accountWithKey(server, { role: 'admin' });
    const readOnly = await accountWithKey(server, { role: 'admin', key: { reach: 'all', access: 'read' } });
    for (const who of [member, ownAdmin]) {
      const listed = await who.call('GET', '/signing-keys');
      expect(listed.status).toBe(403);
      expect(listed.json.error).toBe('insufficient_scope');
    }
    expect((await readOnly.call('GET', '/signing-keys')).status).toBe(200);
    const before = await server.ctx.store.signingKeys.list();
    const refused = await readOnly.call('POST', '/signing-keys/rotate');
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ error: 'insufficient_scope', error_description: 'This API key may only read.' });
    expect(await server.ctx.store.signingKeys.list()).toEqual(before);
  });

  it('rotates: 409 while the next key is new, then the next key signs and the old one retires; the act is recorded', async () => {
    const early = await admin.call('POST', '/signing-keys/rotate');
    expect(early.status).toBe(409);
    expect(early.json.error).toBe('conflict');
    expect(early.json.error_description).toContain('can sign from');

    const before = (await admin.call('GET', '/signing-keys')).json.data;
    server.clock.advance(PUBLISHED_AHEAD);
    const rotated = await admin.call('POST', '/signing-keys/rotate');
    expect(rotated.status).toBe(200);
    expect(stateOf(rotated.json.data, 'current')).toEqual(stateOf(before, 'next'));
    expect(stateOf(rotated.json.data, 'retired')).toEqual(stateOf(before, 'current'));
    expect(stateOf(rotated.json.data, 'next')).toHaveLength(1);
    const retired = rotated.json.data.find((key: { state: string }) => key.state === 'retired');
    expect(retired.retired_at).not.toBeNull();
    expect(Date.parse(retired.published_until) - Date.parse(retired.retired_at)).toBe((3600 + 30) * 1000);

    const activity = await admin.call('GET', '/activity');
    expect(activity.json.data[0]).toMatchObject({
      action: 'signing_key.rotate',
      target: stateOf(before, 'next')[0],
    });
  });
});

describe('agentauth signing-key on a remote server (AGENTAUTH_URL)', () => {
  it('lists and rotates through the API, printing the same as on the database', async () => {
    const cli = cliOn(server);
    const remote = await cli.json(cli.remoteEnv(admin.secret), ['signing-key', 'list']);
    const local = await cli.json(cli.localEnv(), ['signing-key', 'list']);
    expect(remote).toEqual(local);
    expect(remote.signing_keys).toHaveLength(3);

    const refusal = await cli.refusal(cli.remoteEnv(admin.secret), ['signing-key', 'rotate']);
    expect(refusal).toMatch(/can sign from/);
    expect(await cli.refusal(cli.remoteEnv(admin.secret), ['signing-key', 'rotate', '--revoke-previous'])).toMatch(
      /needs a rotation at once/,
    );
    const before = await server.ctx.store.signingKeys.list();
    const current = before.find((key) => key.state === 'current')!;
    const printed = await cli.json(cli.remoteEnv(admin.secret), [
      'signing-key',
      'rotate',
      '--now',
      '--revoke-previous',
    ]);
    const keys = printed.signing_keys as { kid: string; state: string; published_until: string | null }[];
    const signing = keys.find((key) => key.state === 'current')!;
    expect(before.map((key) => key.kid)).not.toContain(signing.kid);
    const withdrawn = keys.find((key) => key.kid === current.kid);
    expect(withdrawn).toMatchObject({ state: 'retired', published_until: expect.any(String) });
    expect(Date.parse((withdrawn as unknown as { published_until: string }).published_until)).toBe(
      server.clock() * 1000,
    );
    const jwks = (await (await fetch(`${server.baseUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual(
      keys
        .filter((key) => key.state !== 'retired')
        .map((key) => key.kid)
        .sort(),
    );
    const member = await accountWithKey(server);
    expect(await cli.refusal(cli.remoteEnv(member.secret), ['signing-key', 'list'])).toContain('all accounts');
    expect(cli.printed()).not.toContain(admin.secret);
  });
});
