/**
 * GET /authorize: the request's parameters, checked in the order of docs/design.md §4 (the
 * client and its redirect URI first, then the rest), into the ValidAuthorization a request is
 * started from (state.ts).
 */
import type { Context } from '../../context.ts';
import { InvalidClient, InvalidRequest, InvalidScope, OAuthError, UnsupportedResponseType } from '../../errors.ts';
import type { ClientRecord } from '../../store/clients.ts';
import { findAuthorizingClient, hasClientSecret, isPublicClient, redirectUriMatches } from '../clients.ts';
import { requestedScope } from '../resource-scopes.ts';
import { permittedResource } from '../resources.ts';
import { MAX_CLIENT_ID_LENGTH, MAX_REDIRECT_URI_LENGTH } from '../rules/client.ts';
import { DEFAULT_SCOPE, withoutScope } from '../scopes.ts';
import { returnTarget, withReturnTarget } from './return-tickets.ts';

/**
 * The longest value each parameter may have (client_id's is the registration rules'). A scope
 * may be longer when the request names a resource, whose server's scopes it may list.
 */
export const LIMITS = {
  clientId: MAX_CLIENT_ID_LENGTH,
  state: 2048,
  nonce: 512,
  scope: 200,
  scopeWithResource: 1000,
  loginHint: 128,
} as const;

/** The query of GET /authorize as the parser gives it: a repeated parameter is an array. */
export type AuthorizeQuery = Record<string, string | string[] | undefined>;

/** An authorization request whose every parameter passed, ready to start (startAuthorization). */
export interface ValidAuthorization {
  client: ClientRecord;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  scope: string;
  nonce: string | null;
  /** The only agent that may authenticate (OIDC login_hint), or null. */
  loginHint: string | null;
  /** The resource (RFC 8707) the tokens are to be for, or null. */
  resource: string | null;
}

/** RFC 6749 Appendix A: the nonce is VSCHAR, printable ASCII. */
const VSCHAR = /^[\x20-\x7e]+$/;
/**
 * state is opaque and returned unchanged (docs/contract.md): any Unicode text without control
 * characters (and without lone surrogates, which no UTF-8 query can carry).
 */
const OPAQUE_TEXT = /^[^\p{Cc}\p{Cs}]+$/u;
/** What the server issues as an agent_id (crypto.ts): the only thing login_hint may name. */
const AGENT_ID = /^agt_[A-Za-z0-9_-]{1,124}$/;
/** A SHA-256 digest in base64url without padding is exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

function single(query: AuthorizeQuery, name: string, maxLength: number): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new InvalidRequest(`${name} was given more than once`);
  if (value !== undefined && value.length > maxLength)
    throw new InvalidRequest(`${name} is longer than ${maxLength} characters`);
  return value;
}

function required(query: AuthorizeQuery, name: string, maxLength: number): string {
  const value = single(query, name, maxLength);
  if (value === undefined || value === '') throw new InvalidRequest(`${name} is required`);
  return value;
}

/**
 * Whether every raw (still percent-encoded) value of the parameter decodes as UTF-8. The query
 * parser keeps a value it cannot decode as it came, which would change it without a word.
 */
export function decodesAsUtf8(rawQuery: string, name: string): boolean {
  // Only a value with a percent sign can fail to decode; most queries need no decoding at all.
  if (!rawQuery.includes('%')) return true;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || !pair.includes('%', eq)) continue;
    const key = pair.slice(0, eq);
    // A key spelled plainly is compared as it is; only an encoded one needs decoding.
    if ((key === name || (/[%+]/.test(key) && formDecoded(key) === name)) && formDecoded(pair.slice(eq + 1)) === null)
      return false;
  }
  return true;
}

function formDecoded(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * Validates an authorization request in the order of docs/design.md §4: the client and its
 * redirect_uri first, then everything else. Throws the OAuthError to show on the 400 page;
 * nothing here ever leads to a redirect. An error found after the redirect URI is known good
 * carries a return target (returnTargetOf) for the page's "Back to <site>" link.
 */
export async function validateAuthorization(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'clientMetadata' | 'secrets'>,
  query: AuthorizeQuery,
  rawQuery = '',
): Promise<ValidAuthorization> {
  const clientId = required(query, 'client_id', LIMITS.clientId);
  const client = await findAuthorizingClient(ctx, clientId);
  if (client?.status !== 'active') throw new InvalidClient('The client is unknown or inactive.', 400);
  if (isPublicClient(client) && !ctx.config.publicClients)
    throw new InvalidClient('Public clients are not enabled on this server.', 400);
  if (client.token_endpoint_auth_method === 'private_key_jwt' && !ctx.config.privateKeyJwt)
    throw new InvalidClient('Clients that sign with keys (private_key_jwt) are not enabled on this server.', 400);

  const redirectUri = required(query, 'redirect_uri', MAX_REDIRECT_URI_LENGTH);
  if (!redirectUriMatches(client, redirectUri)) {
    throw new InvalidRequest('redirect_uri does not match any redirect URI registered for this client.');
  }

  try {
    return await validateParameters(ctx, query, rawQuery, client, redirectUri);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    // The state goes back only as the browser sent it, and only if it is one we could return.
    let state: string | undefined;
    try {
      state = validState(query, rawQuery);
    } catch {
      state = undefined;
    }
    throw withReturnTarget(error, returnTarget(ctx, client, redirectUri, error.error, error.description, state));
  }
}

function validState(query: AuthorizeQuery, rawQuery: string): string {
  const state = required(query, 'state', LIMITS.state);
  if (!OPAQUE_TEXT.test(state)) throw new InvalidRequest('state must not contain control characters.');
  if (!decodesAsUtf8(rawQuery, 'state')) throw new InvalidRequest('state must be percent-encoded UTF-8.');
  return state;
}

/** Everything after the client and its redirect URI, in order. */
async function validateParameters(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'clientMetadata'>,
  query: AuthorizeQuery,
  rawQuery: string,
  client: ClientRecord,
  redirectUri: string,
): Promise<ValidAuthorization> {
  const responseType = required(query, 'response_type', 100);
  if (responseType !== 'code') throw new UnsupportedResponseType('response_type must be code.');

  const state = validState(query, rawQuery);

  const codeChallenge = required(query, 'code_challenge', 128);
  const method = required(query, 'code_challenge_method', 100);
  if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256; plain is not supported.');
  if (!S256_CHALLENGE.test(codeChallenge)) {
    throw new InvalidRequest(
      'code_challenge must be the base64url-encoded SHA-256 of the code verifier (43 characters).',
    );
  }

  const asked = single(query, 'scope', query.resource === undefined ? LIMITS.scope : LIMITS.scopeWithResource);
  // A resource server's scope is granted only with the resource that registered it (§13).
  const scope = asked === undefined ? DEFAULT_SCOPE : await requestedScope(ctx, asked, query.resource);
  let granted = scope;
  if (!hasClientSecret(client) && ctx.config.tokenSigningAlg === 'HS256') {
    // With HS256 an ID token is keyed with the client's secret (OIDC Core §10.1) and the key set
    // is empty by contract, so a client without one (public, or signing with its keys) could
    // verify none: it is granted the rest of what it asked for, without openid, as RFC 6749 §3.3
    // allows (docs/design.md §13). A key pair (TOKEN_SIGNING_ALG, §19) signs ID tokens anyone
    // verifies from jwks_uri, so every client may have them.
    granted = withoutScope(scope, 'openid');
    if (!granted)
      throw new InvalidScope(
        `A ${isPublicClient(client) ? 'public client' : 'client without a secret'} cannot be issued an ID token (it has no secret to key it with); ask for email or profile.`,
      );
  }

  const nonce = single(query, 'nonce', LIMITS.nonce) ?? null;
  if (nonce !== null && !VSCHAR.test(nonce))
    throw new InvalidRequest('nonce must consist of printable ASCII characters.');

  const loginHint = single(query, 'login_hint', LIMITS.loginHint) || null;
  if (loginHint !== null && !AGENT_ID.test(loginHint))
    throw new InvalidRequest('login_hint must be the agent_id of the agent that is to sign in.');

  const resource = await permittedResource(ctx, query.resource);

  return { client, redirectUri, state, codeChallenge, scope: granted, nonce, loginHint, resource };
}
