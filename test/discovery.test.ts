/** Metadata (RFC 8414) with docs/contract.md's exact values, OpenID discovery and the empty key set. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const get = async (path: string) => {
  const response = await fetch(`${server.baseUrl}${path}`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as Record<string, unknown>;
};

describe('discovery', () => {
  it('GET /.well-known/oauth-authorization-server publishes docs/contract.md values', async () => {
    const issuer = server.baseUrl;
    expect(await get('/.well-known/oauth-authorization-server')).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      introspection_endpoint: `${issuer}/introspect`,
      revocation_endpoint: `${issuer}/revoke`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['openid', 'email', 'profile'],
      authorization_response_iss_parameter_supported: true,
      introspection_endpoint_auth_methods_supported: ['client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_post'],
    });
  });

  it('GET /.well-known/openid-configuration adds the OpenID fields', async () => {
    const metadata = await get('/.well-known/oauth-authorization-server');
    const openid = await get('/.well-known/openid-configuration');
    expect(openid).toMatchObject(metadata);
    expect(openid).toMatchObject({
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['HS256'],
    });
  });

  it('GET /.well-known/jwks.json is an empty key set', async () => {
    expect(await get('/.well-known/jwks.json')).toEqual({ keys: [] });
  });

  it('uses BASE_URL as the issuer, without a trailing slash', async () => {
    const other = await startTestServer({ env: { BASE_URL: 'https://id.example.com/' } });
    try {
      const response = await fetch(`${other.url}/.well-known/oauth-authorization-server`);
      const metadata = (await response.json()) as Record<string, string>;
      expect(metadata.issuer).toBe('https://id.example.com');
      expect(metadata.token_endpoint).toBe('https://id.example.com/token');
    } finally {
      await other.close();
    }
  });

  it('MCP_AUTHORIZATION=true adds public clients, metadata documents, key-signed clients, registration and offline_access, and changes nothing else', async () => {
    const mcp = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
    try {
      const base = (await get('/.well-known/oauth-authorization-server')) as Record<string, unknown>;
      const response = await fetch(`${mcp.url}/.well-known/oauth-authorization-server`);
      const metadata = (await response.json()) as Record<string, unknown>;
      const issuer = mcp.baseUrl;
      const rebased = Object.fromEntries(
        Object.entries(base).map(([key, value]) => [
          key,
          typeof value === 'string' ? value.replace(server.baseUrl, issuer) : value,
        ]),
      );
      expect(metadata).toEqual({
        ...rebased,
        token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'private_key_jwt', 'none'],
        introspection_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'private_key_jwt'],
        revocation_endpoint_auth_methods_supported: [
          'client_secret_post',
          'client_secret_basic',
          'private_key_jwt',
          'none',
        ],
        token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        introspection_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        revocation_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        registration_endpoint: `${issuer}/register`,
        client_id_metadata_document_supported: true,
        // OFFLINE_ACCESS follows MCP_AUTHORIZATION (docs/design.md §13).
        scopes_supported: ['openid', 'email', 'profile', 'offline_access'],
      });
      const openid = (await (await fetch(`${mcp.url}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(openid).toMatchObject(metadata);
    } finally {
      await mcp.close();
    }
  });

  it('each MCP feature can be turned on alone', async () => {
    const only = await startTestServer({ env: { PUBLIC_CLIENTS: 'true' } });
    try {
      const metadata = (await (await fetch(`${only.url}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
      expect(metadata.token_endpoint_auth_methods_supported).toEqual(['client_secret_post', 'none']);
      expect(metadata).not.toHaveProperty('registration_endpoint');
      expect(metadata).not.toHaveProperty('client_id_metadata_document_supported');
    } finally {
      await only.close();
    }
  });

  it('PRIVATE_KEY_JWT alone publishes Basic, private_key_jwt and the signing algorithms, nothing else', async () => {
    const keys = await startTestServer({ env: { PRIVATE_KEY_JWT: 'true' } });
    try {
      const base = (await get('/.well-known/oauth-authorization-server')) as Record<string, unknown>;
      const metadata = (await (await fetch(`${keys.url}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
      const methods = ['client_secret_post', 'client_secret_basic', 'private_key_jwt'];
      const algorithms = ['RS256', 'PS256', 'ES256', 'EdDSA'];
      const rebased = (value: unknown) =>
        typeof value === 'string' ? value.replace(server.baseUrl, keys.baseUrl) : value;
      expect(metadata).toEqual({
        ...Object.fromEntries(Object.entries(base).map(([key, value]) => [key, rebased(value)])),
        token_endpoint_auth_methods_supported: methods,
        introspection_endpoint_auth_methods_supported: methods,
        revocation_endpoint_auth_methods_supported: methods,
        token_endpoint_auth_signing_alg_values_supported: algorithms,
        introspection_endpoint_auth_signing_alg_values_supported: algorithms,
        revocation_endpoint_auth_signing_alg_values_supported: algorithms,
      });
    } finally {
      await keys.close();
    }
  });
});
