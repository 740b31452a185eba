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
    expect(openid).toMatchObject({ subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['HS256'] });
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
});
