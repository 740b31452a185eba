/**
 * The registry of grant types (RFC 6749 §4.1, §6): the token endpoint dispatches on it,
 * discovery publishes its names, and dynamic registration and metadata documents accept only
 * what it lists. The names are in ./rules/grant-type-names.ts (a leaf the rules of a client
 * read without importing the token endpoint); the registry is typed by them, so a name added
 * there must get its grant here, and is then served, published and registrable at once.
 */
import type { Context } from '../context.ts';
import { CIBA_GRANT_TYPE, type GrantType, isGrantType } from './rules/grant-type-names.ts';
import { cibaGrant } from './action-requests/grant.ts';
import {
  type ActionTokenResponse,
  type ClientCredentials,
  type CodeExchange,
  exchangeCode,
  refreshTokens,
  type TokenResponse,
} from './tokens.ts';

/** What POST /token may carry, for any grant: each grant reads the fields it needs. */
export type TokenRequestBody = ClientCredentials &
  CodeExchange & { grant_type: string; refresh_token?: string; scope?: string; auth_req_id?: string };

/** A grant: issues tokens for the request, authenticating the client from the same read as its code or token. */
export type Grant = (
  ctx: Context,
  body: TokenRequestBody,
  log?: (message: string) => void,
) => Promise<TokenResponse | ActionTokenResponse>;

const GRANTS: Record<GrantType, Grant> = {
  authorization_code: exchangeCode,
  refresh_token: refreshTokens,
  [CIBA_GRANT_TYPE]: cibaGrant,
};

/**
 * The grant for `name`, or undefined when none is served by that name with these settings (the
 * CIBA grant only while ACTION_APPROVALS is on).
 *
 * @example
 * const grant = grantFor(body.grant_type, ctx.config);
 * if (grant) return grant(ctx, body, log);
 */
export function grantFor(name: string, config: { actionApprovals: boolean }): Grant | undefined {
  return isGrantType(name, config) ? GRANTS[name] : undefined;
}
