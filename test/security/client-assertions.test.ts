/**
 * Clients that sign with keys, attacked (docs/design.md §18, SECURITY.md): a jwks_uri is an
 * address someone else chose, so it never makes the server reach a special-use address (an IP
 * literal or a name resolving to one: no connection at all) unless the operator trusts its
 * network (CLIENT_METADATA_ALLOWED_ADDRESSES); and a client assertion is a credential until it
 * expires, so it appears in no log line, at trace level, whether it was accepted or refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/management/clients.ts';
import { operator } from '../../src/management/actor.ts';
import { assertionFields, clientAssertion, type SigningKey, signingKey } from '../helpers/client-keys.ts';
import { obtainCode, postForm } from '../helpers/flow.ts';
import { type HttpsTestServer, startHttpsServer, TEST_CA } from '../helpers/https.ts';
import { captureLogs, startTestServer, type TestServer } from '../helpers/server.ts';
import { expectJsonError } from './support.ts';

let site: HttpsTestServer;
let key: SigningKey;

beforeAll(async () => {
  key = await signingKey('RS256', 'k1');
  site = await startHttpsServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [key.publicJwk] }));
  });
});
afterAll(async () => {
  await site?.close();
});

/** A client of `server` whose key set is at `jwksUri`. */
async function clientAt(server: TestServer, jwksUri: string): Promise<string> {
  const { client } = await createClient(server.ctx, operator(), {
    name: 'Keys elsewhere',
    redirectUris: ['https://app.example/callback'],
    keys: { jwksUri },
  });
  return client.id;
}

const introspectAs = async (server: TestServer, clientId: string) =>
  postForm(server, '/introspect', {
    token: 'anything',
    ...assertionFields(await clientAssertion(key, clientId, `${server.baseUrl}/token`, server.clock())),
  });

describe('SSRF through jwks_uri', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The test CA is trusted, so only the address rule stands between the server and the site.
    server = await startTestServer({ env: { PRIVATE_KEY_JWT: 'true' }, clientMetadataFetch: { ca: TEST_CA } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('an IP literal or a name resolving to loopback is refused before any connection', async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
      const before = site.connections;
      const clientId = await clientAt(server, `https://${host}:${site.port}/jwks.json`);
      const body = await expectJsonError(await introspectAs(server, clientId), 401, 'invalid_client');
      expect(body.error_description).toMatch(
        /the client's key set \(jwks_uri\) at \S+ could not be fetched: the host is at a special-use IP address, which is never fetched from/,
      );
      expect(site.connections, host).toBe(before);
    }
  });

  it('CLIENT_METADATA_ALLOWED_ADDRESSES trusts a network, and only that one', async () => {
    const trusting = await startTestServer({
      env: { PRIVATE_KEY_JWT: 'true', CLIENT_METADATA_ALLOWED_ADDRESSES: '127.0.0.1/32' },
      clientMetadataFetch: { ca: TEST_CA },
    });
    try {
      const before = site.connections;
      const allowed = await clientAt(trusting, `https://127.0.0.1:${site.port}/jwks.json`);
      expect((await introspectAs(trusting, allowed)).status).toBe(200);
      expect(site.connections).toBeGreaterThan(before);
      // ::1 is loopback too, but outside the one network trusted.
      const other = await clientAt(trusting, `https://[::1]:${site.port}/jwks.json`);
      await expectJsonError(await introspectAs(trusting, other), 401, 'invalid_client');
    } finally {
      await trusting.close();
    }
  });
});

describe('a client assertion is a credential', () => {
  const captured = captureLogs();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { MCP_AUTHORIZATION: 'true', LOG_LEVEL: 'trace' },
      logStream: captured.stream,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('appears in no log line, accepted, refused or beside a second method', async () => {
    const { client } = await createClient(server.ctx, operator(), {
      name: 'Logged',
      redirectUris: ['https://app.example/callback'],
      keys: { jwks: { keys: [key.publicJwk] } },
    });
    const agent = await server.createAgent();
    const party = { clientId: client.id, clientSecret: '', redirectUri: 'https://app.example/callback', ...agent };
    const { code, verifier } = await obtainCode(server, party);
    const token = `${server.baseUrl}/token`;
    const assertions = [
      await clientAssertion(key, client.id, token, server.clock()),
      await clientAssertion(key, client.id, 'https://elsewhere.example', server.clock()),
      await clientAssertion(key, client.id, token, server.clock()),
    ];
    const exchange = (fields: Record<string, string>) =>
      postForm(server, '/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: client.id,
        ...fields,
      });
    await expectJsonError(await exchange(assertionFields(assertions[1]!)), 401, 'invalid_client');
    await expectJsonError(
      await exchange({ ...assertionFields(assertions[2]!), client_secret: 'x' }),
      400,
      'invalid_request',
    );
    expect((await exchange(assertionFields(assertions[0]!))).status).toBe(200);
    // A replay of the accepted one: refused, and not logged either.
    await expectJsonError(await exchange(assertionFields(assertions[0]!)), 401, 'invalid_client');

    const logs = captured.text();
    expect(logs).toContain('"/token"');
    for (const assertion of assertions) {
      const [, payload, signature] = assertion.split('.');
      expect(logs).not.toContain(signature);
      expect(logs).not.toContain(payload);
    }
  });
});
