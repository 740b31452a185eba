/**
 * Clients that sign with keys (RFC 7523 private_key_jwt) in tests: ChatGPT's Client ID Metadata
 * Document as it is published, key pairs made with jose, and client assertions signed with them
 * (jose: an implementation independent of the server's fast-jwt).
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/**
 * ChatGPT's metadata document, in the shape it publishes (late 2026), with `origin` and `id` for
 * chatgpt.com and its client id. Recorded from the copies quoted in the MCP ecosystem's trackers:
 * - Altinity/altinity-mcp#118 (2026-05): `https://chatgpt.com/oauth/<id>/client.json`, client_name
 *   "ChatGPT", client_uri, one redirect URI `https://chatgpt.com/connector/oauth/<id>`, grant types
 *   authorization_code and refresh_token, response_types ["code"], token_endpoint_auth_method
 *   private_key_jwt, token_endpoint_auth_signing_alg RS256, jwks_uri `https://chatgpt.com/oauth/jwks.json`;
 * - django-oauth/django-oauth-toolkit#1857 (2026-09): the newer copy adds
 *   `token_endpoint_auth_methods_supported: ["none", "private_key_jwt"]`.
 * ChatGPT does not fall back to none when the server advertises private_key_jwt (engram-app/Engram#1637).
 *
 * @example
 * const document = chatGptDocument('https://localhost:8443', 'tU1UVEq8rRTK', { newer: true });
 */
export function chatGptDocument(
  origin: string,
  id: string,
  options: { newer?: boolean; jwksUri?: string } = {},
): Record<string, unknown> {
  return {
    client_id: `${origin}/oauth/${id}/client.json`,
    client_uri: `${origin}/`,
    redirect_uris: [`https://chatgpt.com/connector/oauth/${id}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_name: 'ChatGPT',
    token_endpoint_auth_method: 'private_key_jwt',
    ...(options.newer ? { token_endpoint_auth_methods_supported: ['none', 'private_key_jwt'] } : {}),
    token_endpoint_auth_signing_alg: 'RS256',
    jwks_uri: options.jwksUri ?? `${origin}/oauth/jwks.json`,
  };
}

/** A client's signing key: its private half, and its public JWK (with kid and alg) to publish. */
export interface SigningKey {
  alg: 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * A new key pair for `alg`, named `kid`.
 *
 * @example
 * const key = await signingKey('RS256', 'k1'); // publish { keys: [key.publicJwk] }
 */
export async function signingKey(alg: SigningKey['alg'], kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/**
 * An RFC 7523 client assertion for `clientId`, signed by `key`: iss = sub = the client, aud the
 * server's token endpoint, exp a minute after `now`, a fresh jti; `claims` and `header` override.
 *
 * @example
 * const assertion = await clientAssertion(key, clientId, `${server.baseUrl}/token`, server.clock());
 */
export async function clientAssertion(
  key: Pick<SigningKey, 'alg' | 'kid' | 'privateKey'>,
  clientId: string,
  audience: string | string[],
  now: number,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({
    iss: clientId,
    sub: clientId,
    aud: audience,
    iat: now,
    exp: now + 60,
    jti: randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })
    .sign(key.privateKey);
}

/** The form fields of a request authenticated by an assertion (RFC 7523 §2.2). */
export const assertionFields = (assertion: string) => ({
  client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
  client_assertion: assertion,
});
