/**
 * Token issuance and the rules of the token, introspection, revocation and userinfo endpoints
 * (docs/design.md §6). Access tokens are JWTs (RFC 9068 profile), HS256 or signed with the current
 * key pair (§19), whose `jti` is recorded, so revocation is visible to /introspect and /userinfo;
 * refresh tokens and codes are stored as digests only.
 */
import { digest, newGrantId, newRefreshToken, newTokenId, pkceS256Matches } from '../crypto.ts';
import type { Context } from '../context.ts';
import {
  InsufficientScope,
  InvalidGrant,
  InvalidRequest,
  InvalidScope,
  InvalidTarget,
  InvalidToken,
  UnauthorizedClient,
} from '../errors.ts';
import type { AgentProfile } from '../store/agents.ts';
import type { ClientRecord } from '../store/clients.ts';
import type {
  AccessTokenRecord,
  GrantRecord,
  IssuedTokens,
  RefreshTokenRecord,
  TokenContext,
} from '../store/tokens.ts';
import { agentCredentialsExpired } from './agent-policy.ts';
import { isPublicClient, recordClientUse } from './clients.ts';
import { authenticateClient, type ClientCredentials, clientRefused } from './client-authentication.ts';
import { jwtHeader, signIdToken } from './jwt.ts';
import { accessTokenHash, type TokenSigner } from './signing-keys.ts';
import { resourceParameter, sameResource } from './resources.ts';
import { hasScope, isSubset, normalizeScope } from './scopes.ts';
import { agentEvent } from './webhooks/events.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  id_token?: string;
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

// ---------------------------------------------------------------------------------------------
// Issuance

interface Issue {
  client: ClientRecord;
  /**
   * The secret the client authenticated with at this request: the HS256 key of its ID token
   * (OIDC Core §10.1). During a rotation's grace period it may be the previous one. Null for a
   * public client, which is granted openid only when a key pair signs (validation.ts).
   */
  clientSecret: string | null;
  /** The current key pair with TOKEN_SIGNING_ALG other than HS256; null: JWT_SECRET and the client's secret sign. */
  signer: TokenSigner | null;
  grant: GrantRecord;
  /** Scope of this access token (may be narrower than the grant's on refresh). */
  scope: string;
  nonce: string | null;
  /** The ID token's auth_time when it is not the grant's sign-in (an action's decision). */
  authTime?: number;
}

function signAccessToken(
  ctx: Context,
  signer: TokenSigner | null,
  grant: GrantRecord,
  scope: string,
  jti: string,
  now: number,
  /** An action's token (docs/design.md §21): its shorter life, its audience and the approved details. */
  action?: { ttl: number; audience: string; authorizationDetails: unknown[] },
): string {
  const sign = signer ? signer.accessToken : (claims: Record<string, unknown>) => ctx.secrets.accessTokens.sign(claims);
  return sign({
    iss: ctx.config.baseUrl,
    sub: grant.agent_id,
    // RFC 8707 §2: a token for a resource is audience-restricted to it (RFC 9068 §3).
    aud: action?.audience ?? grant.resource ?? grant.client_id,
    client_id: grant.client_id,
    scope,
    iat: now,
    exp: now + (action?.ttl ?? ctx.config.accessTokenTtl),
    jti,
    model: grant.model,
    ...(action ? { authorization_details: action.authorizationDetails } : {}),
  });
}

/**
 * OpenID Connect Core §2, §5.4: the ID token, signed with the current key pair, or with HS256
 * keyed with the client's secret (§10.1). With a key pair it carries `at_hash` of the access
 * token issued with it (§3.1.3.6, what the OpenID conformance suite checks); under HS256 the
 * contract's ID token is unchanged (docs/design.md §19).
 */
function idToken(
  ctx: Context,
  issue: Issue,
  signWith: TokenSigner | string,
  agent: AgentProfile,
  accessToken: string,
  now: number,
): string {
  const { sub: _sub, ...claims } = userClaims(agent, issue.scope);
  const sign =
    typeof signWith === 'string'
      ? (payload: Record<string, unknown>) => signIdToken(signWith, payload)
      : signWith.idToken;
  return sign({
    iss: ctx.config.baseUrl,
    sub: agent.id,
    aud: issue.client.id,
    iat: now,
    exp: now + ctx.config.accessTokenTtl,
    auth_time: issue.authTime ?? issue.grant.auth_time,
    ...(typeof signWith === 'string' ? {} : { at_hash: accessTokenHash(signWith.alg, accessToken) }),
    ...(issue.nonce === null ? {} : { nonce: issue.nonce }),
    ...claims,
  });
}

/** Prepares the rows and the response of one issuance; the caller stores the rows atomically. */
function prepareTokens(
  ctx: Context,
  issue: Issue,
  agent: AgentProfile,
  now: number,
): { rows: IssuedTokens; response: TokenResponse } {
  const jti = newTokenId();
  const refreshToken = newRefreshToken();
  const response: TokenResponse = {
    access_token: signAccessToken(ctx, issue.signer, issue.grant, issue.scope, jti, now),
    token_type: 'Bearer',
    expires_in: ctx.config.accessTokenTtl,
    refresh_token: refreshToken,
    scope: issue.scope,
  };
  const idTokenKey = issue.signer ?? issue.clientSecret;
  if (hasScope(issue.scope, 'openid') && idTokenKey !== null)
    response.id_token = idToken(ctx, issue, idTokenKey, agent, response.access_token, now);
  const rows: IssuedTokens = {
    accessToken: {
      jti,
      grant_id: issue.grant.id,
      client_id: issue.client.id,
      scope: issue.scope,
      expires_at: now + ctx.config.accessTokenTtl,
      revoked_at: null,
    },
    refreshToken: {
      digest: digest(refreshToken),
      grant_id: issue.grant.id,
      created_at: now,
      expires_at: now + ctx.config.refreshTokenTtl,
      used_at: null,
    },
  };
  return { rows, response };
}

/** The current key pair's signer in a key mode (docs/design.md §19); null with HS256. */
const tokenSigner = (ctx: Context): Promise<TokenSigner> | null =>
  ctx.signingKeys.algorithm === null ? null : ctx.signingKeys.signer();

// ---------------------------------------------------------------------------------------------
// An action's tokens (grant_type=urn:openid:params:grant-type:ciba, docs/design.md §21)

/** The CIBA grant's answer: no refresh token; the approved action's authorization_details. */
export interface ActionTokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
  authorization_details: unknown[];
}

/** The longest life of an action's access token (seconds): it serves that one action. */
export const ACTION_TOKEN_TTL = 300;

/**
 * The access token (and ID token, with openid) of an approved action: bound to the client, for
 * min(ACCESS_TOKEN_TTL, 300) seconds, carrying the approved authorization_details; the ID token's
 * auth_time is the decision's. The caller stores the access token's row with the request's
 * transition to issued.
 *
 * @example
 * const { response, accessToken } = await prepareActionTokens(ctx, { client, clientSecret, grant, agent, scope, authorizationDetails, decidedAt, now });
 */
export async function prepareActionTokens(
  ctx: Context,
  input: {
    client: ClientRecord;
    clientSecret: string | null;
    grant: GrantRecord;
    agent: AgentProfile;
    scope: string;
    authorizationDetails: unknown[];
    decidedAt: number;
    now: number;
  },
): Promise<{ response: ActionTokenResponse; accessToken: AccessTokenRecord }> {
  const { client, grant, agent, scope, now } = input;
  const ttl = Math.min(ctx.config.accessTokenTtl, ACTION_TOKEN_TTL);
  const signer = await tokenSigner(ctx);
  const jti = newTokenId();
  const action = { ttl, audience: client.id, authorizationDetails: input.authorizationDetails };
  const accessToken = signAccessToken(ctx, signer, grant, scope, jti, now, action);
  const response: ActionTokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ttl,
    scope,
    authorization_details: input.authorizationDetails,
  };
  const idTokenKey = signer ?? input.clientSecret;
  if (hasScope(scope, 'openid') && idTokenKey !== null) {
    const issue: Issue = {
      client,
      clientSecret: input.clientSecret,
      signer,
      grant,
      scope,
      nonce: null,
      authTime: input.decidedAt,
    };
    response.id_token = idToken(ctx, issue, idTokenKey, agent, accessToken, now);
  }
  const row: AccessTokenRecord = {
    jti,
    grant_id: grant.id,
    client_id: client.id,
    scope,
    expires_at: now + ttl,
    revoked_at: null,
  };
  return { response, accessToken: row };
}

/**
 * The agent of a grant whose tokens may still be used, or null (revoked, disabled, expired
 * credentials): what an action's tokens need too.
 *
 * @example
 * const agent = grantAgent(found, now);
 */
export const grantAgent = (found: TokenContext<unknown>, now: number): AgentProfile | null => usableAgent(found, now);

// ---------------------------------------------------------------------------------------------
// grant_type=authorization_code

/** client_secret_post's fields (or a public client's client_id alone), as the token endpoints receive them. */
export type { ClientCredentials };

export interface CodeExchange {
  code?: string;
  code_verifier?: string;
  redirect_uri?: string;
  /** RFC 8707 §2.2: if given, the resource of the authorization request. */
  resource?: string | string[];
}

/**
 * RFC 8707 at the token endpoint: a resource named here must be the one the code or grant is
 * bound to (one audience per grant here); none means that one.
 */
function confirmResource(requested: string | string[] | undefined, bound: string | null): void {
  if (requested === undefined) return;
  const resource = resourceParameter(requested);
  // The same resource in another spelling (case, default port, a host's bare slash) is the same.
  if (bound === null || resource === null || !sameResource(resource, bound))
    throw new InvalidTarget(
      bound === null
        ? 'This grant was not issued for a resource.'
        : 'resource differs from the one this grant was issued for.',
    );
}

/**
 * grant_type=authorization_code. The client is authenticated here, from the same read as the
 * code and its agent: one statement for all three.
 */
export async function exchangeCode(
  ctx: Context,
  input: ClientCredentials & CodeExchange,
  log?: (message: string) => void,
): Promise<TokenResponse> {
  // Without a code the digest names nothing; the missing code is answered after authentication.
  const codeDigest = digest(input.code ?? '');
  const read = input.client_id ? await ctx.store.codes.findWithCaller(input.client_id, codeDigest) : undefined;
  const client = await authenticateClient(ctx, input, log, read);
  if (!input.code) throw new InvalidRequest('code is required');
  if (!input.code_verifier) throw new InvalidRequest('code_verifier is required (PKCE S256)');
  if (!CODE_VERIFIER.test(input.code_verifier))
    throw new InvalidRequest('code_verifier must be 43 to 128 unreserved characters');

  const found = read?.code;
  const code = found?.code;
  const now = ctx.clock();
  // A code of another client, an expired code, a wrong verifier or redirect_uri: refused, and
  // nothing is revoked, so a stolen code cannot be used to destroy the owner's tokens.
  if (!code || code.client_id !== client.id) throw new InvalidGrant('The authorization code is invalid.');
  if (now >= code.expires_at) throw new InvalidGrant('The authorization code has expired.');
  if (input.redirect_uri !== undefined && input.redirect_uri !== code.redirect_uri) {
    throw new InvalidGrant('redirect_uri does not match the one of the authorization request.');
  }
  if (!pkceS256Matches(input.code_verifier, code.code_challenge))
    throw new InvalidGrant('The code_verifier does not match the code_challenge.');
  confirmResource(input.resource, code.resource);

  const replay = async (): Promise<never> => {
    // RFC 6749 §4.1.2 / RFC 9700 §4.5: a second use of a code revokes what it issued.
    const redeemed = await ctx.store.codes.find(codeDigest);
    if (redeemed?.grant_id) await ctx.store.grants.revoke(redeemed.grant_id, ctx.clock());
    throw new InvalidGrant('The authorization code has already been used; the tokens issued from it are revoked.');
  };
  if (code.redeemed_at !== null) return replay();

  if (found?.agent?.status !== 'active') throw new InvalidGrant('The agent of this grant is disabled.');
  const agent = found.agent;
  if (agentCredentialsExpired(agent, now)) throw new InvalidGrant(CREDENTIALS_EXPIRED);
  const grant: GrantRecord = {
    id: newGrantId(),
    client_id: client.id,
    agent_id: code.agent_id,
    scope: code.scope,
    model: code.model,
    auth_time: code.auth_time,
    created_at: now,
    revoked_at: null,
    resource: code.resource,
  };
  const { rows, response } = prepareTokens(
    ctx,
    {
      client,
      clientSecret: input.client_secret ?? null,
      signer: await tokenSigner(ctx),
      grant,
      scope: code.scope,
      nonce: code.nonce,
    },
    agent,
    now,
  );
  if (!(await ctx.store.codes.redeem(codeDigest, now, grant, rows))) return replay();
  await recordClientUse(ctx, client); // a self-registered client's, at most daily; no write for others
  return response;
}

// ---------------------------------------------------------------------------------------------
// grant_type=refresh_token

/**
 * grant_type=refresh_token. The client is authenticated here, from the same read as the
 * refresh token: one statement for both (docs/design.md §6).
 */
export async function refreshTokens(
  ctx: Context,
  input: ClientCredentials & { refresh_token?: string; scope?: string; resource?: string | string[] },
  log?: (message: string) => void,
): Promise<TokenResponse> {
  // Without a refresh token the digest names nothing; the missing token is answered after authentication.
  const tokenDigest = digest(input.refresh_token ?? '');
  const read = input.client_id ? await ctx.store.refreshTokens.findWithCaller(input.client_id, tokenDigest) : undefined;
  const client = await authenticateClient(ctx, input, log, read);
  if (!input.refresh_token) throw new InvalidRequest('refresh_token is required');
  const found = read?.token;
  const now = ctx.clock();
  // Another client's token revokes nothing, window or not: whoever presents it cannot use it to
  // cut its client off (as with a code redeemed by another client).
  if (!found || found.grant.client_id !== client.id) throw new InvalidGrant('The refresh token is invalid.');
  const { token, grant } = found;
  if (grant.revoked_at !== null) throw new InvalidGrant('The refresh token has been revoked.');

  const window = ctx.config.refreshTokenReuseWindow;
  const reuse = (): Promise<never> => revokeForReuse(ctx, found, client);
  if (token.used_at !== null) {
    // Within the window the client's other processes converge on the one successor pair.
    const converged = window > 0 ? await convergedPair(ctx, input.refresh_token, tokenDigest, now) : null;
    if (converged) {
      confirmResource(input.resource, grant.resource);
      return converged;
    }
    return reuse();
  }
  if (now >= token.expires_at) throw new InvalidGrant('The refresh token has expired.');

  let scope = grant.scope;
  if (input.scope !== undefined) {
    // Within the grant's scope only (RFC 6749 §6): what it holds was checked when it was granted.
    if (!isSubset(input.scope, grant.scope) || !normalizeScope(input.scope)) {
      throw new InvalidScope('The requested scope exceeds the scope of the grant.');
    }
    scope = normalizeScope(input.scope);
  }
  confirmResource(input.resource, grant.resource);
  const agent = usableAgent(found, now);
  if (!agent)
    throw new InvalidGrant(
      found.agent && agentCredentialsExpired(found.agent, now)
        ? CREDENTIALS_EXPIRED
        : 'The agent of this grant is disabled.',
    );
  const { rows, response } = prepareTokens(
    ctx,
    { client, clientSecret: input.client_secret ?? null, signer: await tokenSigner(ctx), grant, scope, nonce: null },
    agent,
    now,
  );
  const successor = window > 0 ? sealSuccessor(ctx, input.refresh_token, rows, response) : undefined;
  if (!(await ctx.store.refreshTokens.rotate(tokenDigest, now, rows, successor))) {
    // Lost the conditional write to a concurrent refresh: converge on its pair, within the window.
    const converged = window > 0 ? await convergedPair(ctx, input.refresh_token, tokenDigest, ctx.clock()) : null;
    return converged ?? reuse();
  }
  await recordClientUse(ctx, client); // a self-registered client's, at most daily; no write for others
  return response;
}

/** The successor pair as sealed for the reuse window: the answer, and when its access token expires. */
interface SuccessorPair {
  response: TokenResponse;
  access_expires_at: number;
}

/** The successor pair sealed under the server secret and the presented token (docs/design.md §6). */
function sealSuccessor(ctx: Context, presented: string, rows: IssuedTokens, response: TokenResponse) {
  const pair: SuccessorPair = { response, access_expires_at: rows.accessToken.expires_at };
  return { sealed: ctx.secrets.successors.seal(presented, JSON.stringify(pair)), digest: rows.refreshToken.digest };
}

/**
 * The pair a rotated refresh token converges on when presented again by its client within
 * REFRESH_TOKEN_REUSE_WINDOW: the same refresh and access token, `expires_in` what remains. Null
 * (reuse) after the window, when no pair was kept, when the grant is revoked, or when the
 * successor has itself been rotated since: the chain is not followed (docs/design.md §6). One read.
 */
async function convergedPair(
  ctx: Context,
  presented: string,
  presentedDigest: string,
  now: number,
): Promise<TokenResponse | null> {
  const state = await ctx.store.refreshTokens.findSuccessor(presentedDigest);
  if (!state || state.used_at === null || state.successor === null) return null;
  if (now >= state.used_at + ctx.config.refreshTokenReuseWindow || state.grant_revoked || state.successor_rotated)
    return null;
  const opened = ctx.secrets.successors.open(presented, state.successor);
  if (opened === null) return null;
  const pair = JSON.parse(opened) as SuccessorPair;
  return { ...pair.response, expires_in: Math.max(0, pair.access_expires_at - now) };
}

/**
 * RFC 9700 §4.14.2: a rotated refresh token presented again, outside what the reuse window
 * forgives, means one of the parties holding it is an attacker; the whole grant is revoked, and
 * that is announced: the sign-in history's `refresh_token_reused` and `agent.grants_revoked`.
 */
async function revokeForReuse(
  ctx: Context,
  found: TokenContext<RefreshTokenRecord>,
  client: ClientRecord,
): Promise<never> {
  const { grant } = found;
  const now = ctx.clock();
  const agent = await ctx.store.agents.find(grant.agent_id);
  const event = {
    at: now,
    agent_id: grant.agent_id,
    request_id: null,
    client_id: grant.client_id,
    model: grant.model,
    ip: null,
    user_agent: null,
    outcome: REFRESH_TOKEN_REUSED,
  };
  const announce = agent
    ? [
        agentEvent('agent.grants_revoked', agent, {
          client: { id: client.id, name: client.name },
          reason: 'refresh_token_reuse',
        }),
      ]
    : [];
  await ctx.store.refreshTokens.revokeForReuse(grant.id, now, event, announce);
  throw new InvalidGrant('The refresh token has already been used; the grant is revoked.');
}

/** The sign-in history's outcome of a grant revoked for the reuse of a refresh token. */
export const REFRESH_TOKEN_REUSED = 'refresh_token_reused';

// ---------------------------------------------------------------------------------------------
// Access tokens in use: userinfo, introspection, revocation

export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  client_id: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  model: string;
  /** An action's token: the approved RFC 9396 authorization details (docs/design.md §21). */
  authorization_details?: unknown[];
}

/**
 * Verifies signature, type, issuer and lifetime; null when the JWT is not one of our valid access
 * tokens. Whatever TOKEN_SIGNING_ALG says now, an HS256 token of JWT_SECRET (or a previous secret)
 * and a token of any published key pair verify, so a switch either way ends no token early
 * (docs/design.md §19).
 */
async function verifyAccessJwt(ctx: Context, token: string): Promise<AccessTokenClaims | null> {
  const now = ctx.clock();
  const claims =
    jwtHeader(token)?.alg === 'HS256'
      ? ctx.secrets.accessTokens.verify(token, now)
      : await ctx.signingKeys.verify(token, 'at+jwt', now);
  return claims && typeof claims.jti === 'string' ? (claims as unknown as AccessTokenClaims) : null;
}

/** The token's claims when it is active: a valid JWT, not revoked, of a usable grant. */
async function activeAccessToken(ctx: Context, token: string): Promise<ActiveAccessToken | null> {
  const claims = await verifyAccessJwt(ctx, token);
  return claims && activeFrom(claims, await ctx.store.accessTokens.findContext(claims.jti), ctx.clock());
}

type ActiveAccessToken = { claims: AccessTokenClaims; record: AccessTokenRecord; agent: AgentProfile };

/** Verified claims and the token's stored context: active, or null when revoked or of an unusable grant. */
function activeFrom(
  claims: AccessTokenClaims,
  found: TokenContext<AccessTokenRecord> | undefined,
  now: number,
): ActiveAccessToken | null {
  const agent = found && usableAgent(found, now);
  if (!found || !agent || found.token.revoked_at !== null) return null;
  return { claims, record: found.token, agent };
}

/**
 * The agent of a grant whose tokens may still be used: the grant is not revoked, its agent and
 * client are still active — disabling a compromised agent ends all of its tokens at once — and
 * its owner has not let its credentials expire (docs/design.md §16).
 */
function usableAgent(found: TokenContext<unknown>, now: number): AgentProfile | null {
  const agent = found.agent;
  return found.grant.revoked_at === null &&
    agent?.status === 'active' &&
    found.clientActive &&
    !agentCredentialsExpired(agent, now)
    ? agent
    : null;
}

const CREDENTIALS_EXPIRED = "The agent's credentials have expired; its owner can extend them in the console.";

/** Claims about the agent's owner, per scope (docs/design.md §6). */
export function userClaims(agent: AgentProfile, scope: string): Record<string, unknown> {
  const claims: Record<string, unknown> = { sub: agent.id };
  if (hasScope(scope, 'email')) {
    claims.email = agent.owner_email;
    claims.email_verified = agent.owner_email_verified;
  }
  if (hasScope(scope, 'profile')) claims.name = agent.owner_name ?? agent.name;
  return claims;
}

export async function userinfo(ctx: Context, token: string | undefined): Promise<Record<string, unknown>> {
  if (!token) {
    const error = new InvalidToken('An access token is required (Authorization: Bearer).');
    error.headers['www-authenticate'] = 'Bearer';
    throw error;
  }
  const active = await activeAccessToken(ctx, token);
  if (!active) throw new InvalidToken('The access token is invalid, expired or revoked.');
  // A token audience-restricted to a resource server is for that server, not for userinfo.
  if (active.claims.aud !== active.claims.client_id)
    throw new InvalidToken('The access token was issued for another resource.');
  if (!hasScope(active.record.scope, 'openid'))
    throw new InsufficientScope('The access token was not granted the openid scope.', 'openid');
  return userClaims(active.agent, active.record.scope);
}

/**
 * Which kind a presented token is follows from its form (refresh tokens carry the rft_ prefix,
 * access tokens are JWTs), so token_type_hint is accepted and not needed (RFC 7662 §2.1, RFC 7009 §2.1).
 */
type TokenHint = string | undefined;
const isRefreshToken = (token: string) => token.startsWith('rft_');

/**
 * RFC 7662: { active: false } for anything not active or not for this caller. A caller may
 * introspect the tokens issued to it and, as a resource server, the access tokens issued for a
 * resource it serves (RFC 7662 §2.1: the protected resource asks). Public clients may not
 * introspect (§4: the endpoint needs the caller's authentication). The caller is authenticated
 * first, from the same read as the token: one statement for both.
 */
export async function introspect(
  ctx: Context,
  credentials: ClientCredentials,
  token: string,
  log?: (message: string) => void,
): Promise<Record<string, unknown>> {
  const authenticate = async (known?: { client: ClientRecord | undefined }) => {
    const client = await authenticateClient(ctx, credentials, log, known);
    if (isPublicClient(client))
      throw clientRefused(
        credentials,
        'A public client cannot introspect tokens; introspection needs client authentication.',
      );
    return client;
  };
  const inactive = { active: false };
  if (isRefreshToken(token)) {
    const read = credentials.client_id
      ? await ctx.store.refreshTokens.findWithCaller(credentials.client_id, digest(token))
      : undefined;
    const client = await authenticate(read);
    const found = read?.token;
    const now = ctx.clock();
    if (
      !found ||
      found.grant.client_id !== client.id ||
      found.token.used_at !== null ||
      now >= found.token.expires_at ||
      !usableAgent(found, now)
    )
      return inactive;
    const { token: record, grant } = found;
    return {
      active: true,
      client_id: grant.client_id,
      scope: grant.scope,
      sub: grant.agent_id,
      iss: ctx.config.baseUrl,
      iat: record.created_at,
      exp: record.expires_at,
      token_type: 'refresh_token',
      ...(grant.resource === null ? {} : { aud: grant.resource }),
    };
  }
  const claims = await verifyAccessJwt(ctx, token);
  if (!claims || !credentials.client_id) {
    await authenticate();
    return inactive;
  }
  const read = await ctx.store.accessTokens.findWithCaller(credentials.client_id, claims.jti);
  const client = await authenticate(read);
  const active = activeFrom(claims, read.token, ctx.clock());
  const mayRead = active && (active.record.client_id === client.id || client.resources.includes(active.claims.aud));
  if (!active || !mayRead) return inactive;
  return {
    active: true,
    scope: claims.scope,
    client_id: claims.client_id,
    token_type: 'Bearer',
    exp: claims.exp,
    iat: claims.iat,
    sub: claims.sub,
    aud: claims.aud,
    iss: claims.iss,
    jti: claims.jti,
    model: claims.model,
    ...(claims.authorization_details === undefined ? {} : { authorization_details: claims.authorization_details }),
  };
}

/**
 * RFC 7009. Unknown, invalid and expired tokens answer 200 (§2.2). A token issued to another
 * client is refused (§2.1). Revoking a refresh token revokes its whole grant.
 */
export async function revoke(ctx: Context, client: ClientRecord, token: string, _hint?: TokenHint): Promise<void> {
  const now = ctx.clock();
  if (isRefreshToken(token)) {
    const grant = (await ctx.store.refreshTokens.findContext(digest(token)))?.grant;
    if (!grant) return;
    if (grant.client_id !== client.id) throw new UnauthorizedClient('The token was not issued to this client.');
    await ctx.store.grants.revoke(grant.id, now);
    return;
  }
  const claims = await verifyAccessJwt(ctx, token);
  if (!claims) return;
  const record = await ctx.store.accessTokens.find(claims.jti);
  if (!record) return;
  if (record.client_id !== client.id) throw new UnauthorizedClient('The token was not issued to this client.');
  await ctx.store.accessTokens.revoke(record.jti, now);
}
